"""The reference grammar (rag/lang/reference.py): headings, citations and what a user types, read the same way."""

import pytest

from rag.lang import reference as ref


@pytest.mark.parametrize(("line", "groups"), [
    ("제43조의2(연차의 사용) 사용자는", ("43", "2", "연차의 사용", "사용자는")),
    ("제 5 조 (목적)", ("5", None, "목적", "")),
])
def test_an_article_heading_gives_number_branch_title_and_text(line, groups):
    assert ref.ARTICLE_HEADING.match(line).groups() == groups


def test_division_annex_and_addenda_headings():
    assert ref.DIVISION_HEADING.match("제2장의2 근로계약").groups() == ("2", "장", "2", "근로계약")
    assert ref.ANNEX_HEADING.match("[별지 제1호의2 서식] 신청서").groups() == ("별지", "1", "2", "신청서")
    assert ref.ADDENDA_HEADING.match("부 칙 <제12호, 2024.1.1.>").group(1) == "제12호, 2024.1.1."
    assert ref.DELETED_BODY.match("삭제 <2024. 1. 1.>")


def test_a_reference_inside_a_sentence_is_no_unit_start():
    assert ref.UNIT_START.match("제3조(정의) 이 규칙에서")
    assert not ref.UNIT_START.match("제50조, 제69조 본문에 따른")
    assert not ref.UNIT_START.match("제2장 및 제3장을 적용한다")


def test_a_citation_names_its_law_or_leaves_it_to_the_context():
    found = [m.groupdict() for m in ref.CITATION.finditer("「근로기준법」 제60조 및 같은 법 제43조의2에 따라")]
    assert [(f["named"], f["law"], f["number"], f["branch"]) for f in found] == [
        ("근로기준법", None, "60", None), (None, "같은 법 ", "43", "2")]
    assert ref.NAMED_CITATION.findall("「근로기준법 시행령」 제30조의2 제1항") == [
        ("근로기준법 시행령", "제30조의2", "제1항")]


@pytest.mark.parametrize(("question", "label"), [("제20조 개정됐어?", "제20조"), ("43조의2 바뀌었나", "제43조의2"),
                                                 ("2024년에 뭐가 바뀌었어?", "")])
def test_the_article_a_question_mentions(question, label):
    match = ref.ARTICLE_MENTION.search(question)
    assert (ref.article_of(*match.groups()) if match else "") == label


def test_what_a_user_types_for_an_article_a_chapter_and_an_annex():
    assert ref.ARTICLE_REF.match("60조 2항 보여줘").groups() == ("60", None, "2", " 보여줘")
    assert ref.DIVISION_REF.match("제4장").groups() == ("4", "장", None, "")
    assert ref.ANNEX_REF.match("별표 2").groups()[:2] == ("별표", "2")
    assert ref.SUBORDINATE.match(" 시행령 30조").group(1) == "시행령"
    assert ref.NAME_END.split("근기법 60조", maxsplit=1)[0] == "근기법"


def test_labels_and_markers():
    assert ref.article_label(43, 2) == "제43조의2" and ref.article_of("60", None) == "제60조"
    assert ref.paragraph_label("②") == "제2항" and ref.paragraph_marker(3) == "③"
    assert ref.is_division_label("제1절의2") and not ref.is_division_label("제1조")
    assert ref.chapter_of("제4장 임금") == "제4장" and ref.chapter_of("제1절 총칙") == ""


def test_rule_codes_and_dates():
    assert ref.RULE_CODE.match("규정 제3-1-24호 제5조").group(1) == "3-1-24"
    assert ref.RULE_CODE_SUFFIX.search("여비 규정(제3-1-24호)").group(1) == "3-1-24"
    assert ref.DATE.search("2026년 3월 1일").groups()[:3] == ("2026", "3", "1")
    assert ref.ENFORCED_FROM.search("이 규칙은 2026년 3월 1일부터 시행한다.").groups() == ("2026", "3", "1")
