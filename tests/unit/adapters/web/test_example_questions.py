"""The playground's example questions come from what is indexed, not from the bundled samples."""

from adapters.web import labels
from adapters.web.page import example_questions, render_page

RULES = [("제1조", "목적"), ("제2조", "정의"), ("제3조", "연구비 집행"), ("제4조", "연구노트 작성 및 보관"),
         ("제5조", "보고"), ("제6조", "벌칙")]
GUIDE = [("제1조", "목적"), ("제2조", "재택근무 신청 절차"), ("제3조", "장비")]


def test_the_first_looks_up_an_article_that_exists_and_the_others_ask_about_titles():
    examples = example_questions([("연구관리 지침", RULES), ("재택근무 안내", GUIDE)])
    assert examples[0] == "연구관리 지침 제3조 보여줘"
    assert examples[1:] == ("연구노트 작성 및 보관에 대해 알려줘", "재택근무 신청 절차에 대해 알려줘")
    assert not any("목적" in e for e in examples)


def test_a_title_too_long_for_a_button_is_passed_over():
    long_title = "의학 관련 학사학위 및 석사학위의 과정이 통합된 과정의 학생정원"
    examples = example_questions([("고등교육법 시행령", [("제1조", "목적"), ("제2조", long_title),
                                                        ("제3조", "학기"), ("제4조", "수업")])])
    assert long_title not in " ".join(examples) and "학기에 대해 알려줘" in examples


def test_nothing_indexed_keeps_the_fixed_examples():
    assert example_questions([]) == ()
    page = render_page({"labels": {}}, examples=())
    assert labels.EXAMPLE_QUESTIONS[0] in page
    page = render_page({"labels": {}}, examples=("연구관리 지침 제3조 보여줘",))
    assert "연구관리 지침 제3조 보여줘" in page and labels.EXAMPLE_QUESTIONS[0] not in page
