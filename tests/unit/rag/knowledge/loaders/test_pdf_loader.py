"""PdfLoader: page text and spans, wrapped-line joining, running heads, and the refusals users see."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader, PdfWriter

from rag.errors import IngestError
from rag.knowledge.loaders.pdf import PdfLoader, join_wrapped_pages
from tests.unit.rag.knowledge.loaders.document_factories import SAMPLE_LINES, make_pdf, write


def _encrypted(pdf: bytes, *, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner-only", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class TestJoinWrappedLines:
    def test_a_line_wrapped_at_a_space_is_joined_with_a_space(self):
        lines = [
            "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 ",
            "복무 질서를 정한다.",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정한다."
        ]

    def test_a_word_split_by_the_wrap_is_joined_without_a_space(self):
        lines = [
            "제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한",
            "다.",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            "제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다."
        ]

    def test_without_wrap_spaces_from_the_producer_every_join_gets_a_space(self):
        lines = ["제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게", "적용한다."]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=False)[0] == [
            "제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다."
        ]

    def test_structural_lines_are_never_joined(self):
        lines = [
            "제3조(휴가) 직원은 다음 각 호의 휴가를 신청할 수 있으며 그 절차는 인사팀이",
            "① 연차휴가는 근로기준법에 따른다.",
            "1. 연차휴가 신청은 사흘 전까지 한다",
            "가. 긴급한 경우에는 당일 신청할 수 있다",
            "12의2. 병가는 질병으로 근무할 수 없는 직원이 신청할 수 있으며 그 기간은 연 60",
            "제4조(병가) 질병으로 근무할 수 없는 직원은 병가를 신청할 수 있는데 그 기간은",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == lines

    def test_a_reference_at_the_start_of_a_line_continues_the_sentence(self):
        lines = [
            '8. "소정근로시간"이란 근로기준법 제50조, 제69조 본문 또는 「산업안전보건법」 ',
            "제139조제1항에 따른 근로시간의 범위에서 정한 근로시간을 말한다.",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            '8. "소정근로시간"이란 근로기준법 제50조, 제69조 본문 또는 「산업안전보건법」 '
            "제139조제1항에 따른 근로시간의 범위에서 정한 근로시간을 말한다."
        ]

    def test_a_sentence_end_with_the_wrap_space_kept_continues_the_paragraph(self):
        lines = [
            "① 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다. 다만, 수습 중인 ",
            "직원에게는 제5조를 적용하지 아니한다. <개정 2024. 3. 1.>",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            "① 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다. 다만, 수습 중인 직원에게는 "
            "제5조를 적용하지 아니한다. <개정 2024. 3. 1.>"
        ]

    def test_item_da_after_item_na_is_an_item_elsewhere_the_end_of_a_sentence(self):
        lines = [
            "① 직원은 근로계약에서 정한 업무 외의 일을 하기 전에 부서장의 허락을 받아야 한",
            "다. 다만, 긴급한 경우에는 사후에 보고할 수 있다.",
            "가. 출장 신청",
            "나. 연장근무 신청을 하려는 직원은 전날까지 전자결재 시스템으로 신청서를 올린",
            "다. 휴일근무 신청",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            "① 직원은 근로계약에서 정한 업무 외의 일을 하기 전에 부서장의 허락을 받아야 한다. "
            "다만, 긴급한 경우에는 사후에 보고할 수 있다.",
            "가. 출장 신청",
            "나. 연장근무 신청을 하려는 직원은 전날까지 전자결재 시스템으로 신청서를 올린",
            "다. 휴일근무 신청",
        ]

    def test_a_sentence_end_or_a_short_line_stops_the_join(self):
        lines = [
            "제1장 총칙",
            "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정한다.",
            "이 문장은 앞 문장에 이어 붙지 않는다.",
        ]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == lines

    def test_a_paragraph_continued_on_the_next_page_joins_where_it_started(self):
        pages = [
            ["제1조(목적) 이 규칙은 주식회사 한빛의 모든 직원이 지켜야 할 근무 조건과 "],
            ["복무 질서를 정한다.", "제2조(정의) 직원이란 정규직을 말한다."],
        ]
        assert join_wrapped_pages(pages, keeps_wrap_spaces=True) == [
            ["제1조(목적) 이 규칙은 주식회사 한빛의 모든 직원이 지켜야 할 근무 조건과 복무 질서를 정한다."],
            ["제2조(정의) 직원이란 정규직을 말한다."],
        ]

    def test_a_blank_line_separates_paragraphs(self):
        lines = ["제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정하는", "", "다음 문단"]
        assert join_wrapped_pages([lines], keeps_wrap_spaces=True)[0] == [
            "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정하는",
            "다음 문단",
        ]


class TestPdfLoader:
    def test_reads_article_lines_with_page_spans_and_title(self, tmp_path):
        pdf = make_pdf([SAMPLE_LINES[:5], SAMPLE_LINES[5:]], title="한빛 취업규칙")
        loaded = PdfLoader().load(write(tmp_path, "rules.pdf", pdf))

        assert loaded.format == "pdf"
        assert loaded.title == "한빛 취업규칙"
        assert loaded.text.splitlines()[2] == SAMPLE_LINES[2]
        second_page = loaded.text.index("제2장 근무")
        assert [(span.page, span.offset) for span in loaded.pages] == [(1, 0), (2, second_page)]
        assert loaded.page_at(loaded.text.index("제2조")) == 1
        assert loaded.page_at(loaded.text.index("부칙")) == 2
        assert loaded.warnings == ()

    def test_rejoins_lines_the_pdf_wrapped(self, tmp_path):
        # Justified text: wrapped lines are as wide as the page allows; the producer keeps the space at a
        # wrap between words, so a wrap without one split a word.
        page = [
            "제1조(목적) 이 규칙은 주식회사 한빛의 모든 직원이 지켜야 할 근무 조건과 ",
            "복무 질서를 정한다.",
            "제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한",
            "다.",
        ]
        loaded = PdfLoader().load(write(tmp_path, "wrapped.pdf", make_pdf([page])))
        assert loaded.text.splitlines() == [
            "제1조(목적) 이 규칙은 주식회사 한빛의 모든 직원이 지켜야 할 근무 조건과 복무 질서를 정한다.",
            "제2조(적용 범위) 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다.",
        ]

    def test_drops_running_heads_page_numbers_and_toc_entries(self, tmp_path):
        pages = [
            ["한빛 취업규칙", "차 례", "제1조(목적) ········ 1", "- 1 -"],
            ["한빛 취업규칙", "제1조(목적) 이 규칙은 근무 조건을 정한다.", "- 2 -"],
            ["한빛 취업규칙", "제2조(정의) 이 규칙에서 직원이란 정규직을 말한다.", "- 3 -"],
        ]
        loaded = PdfLoader().load(write(tmp_path, "headed.pdf", make_pdf(pages)))
        assert loaded.text.splitlines() == [
            "차 례",
            "",
            "제1조(목적) 이 규칙은 근무 조건을 정한다.",
            "",
            "제2조(정의) 이 규칙에서 직원이란 정규직을 말한다.",
        ]

    def test_metadata_title_not_shown_in_the_text_is_ignored(self, tmp_path):
        pdf = make_pdf([SAMPLE_LINES], title="Microsoft Word - 템플릿 문서.docx")
        assert PdfLoader().load(write(tmp_path, "rules.pdf", pdf)).title == ""

    def test_owner_only_encryption_is_opened_with_the_empty_password(self, tmp_path):
        pdf = _encrypted(make_pdf([SAMPLE_LINES]), user_password="")
        loaded = PdfLoader().load(write(tmp_path, "locked-for-printing.pdf", pdf))
        assert "제3조(근무시간) 근무시간은 하루 8시간, 1주 40시간으로 한다." in loaded.text

    def test_password_protected_pdf_is_refused_with_a_reason(self, tmp_path):
        pdf = _encrypted(make_pdf([SAMPLE_LINES]), user_password="secret")
        with pytest.raises(IngestError, match=r"^secret\.pdf: password-protected PDF"):
            PdfLoader().load(write(tmp_path, "secret.pdf", pdf))

    def test_pdf_without_text_is_reported_as_probably_scanned(self, tmp_path):
        reason = r"^scan\.pdf: no extractable text in 2 page\(s\); it is probably a scanned image\. Run OCR"
        with pytest.raises(IngestError, match=reason):
            PdfLoader().load(write(tmp_path, "scan.pdf", make_pdf([[], []])))

    def test_pages_without_text_are_listed_in_warnings(self, tmp_path):
        pdf = make_pdf([SAMPLE_LINES[:5], [], [], SAMPLE_LINES[5:]])
        loaded = PdfLoader().load(write(tmp_path, "partly-scanned.pdf", pdf))
        assert loaded.warnings == ("pages without text (scanned images?): 2–3",)
        assert [span.page for span in loaded.pages] == [1, 4]

    def test_corrupt_pdf_is_reported_as_damaged(self, tmp_path):
        pdf = make_pdf([SAMPLE_LINES])
        with pytest.raises(IngestError, match=r"^cut\.pdf: damaged or incomplete PDF"):
            PdfLoader().load(write(tmp_path, "cut.pdf", pdf[: len(pdf) // 2]))

    def test_empty_file_is_reported(self, tmp_path):
        with pytest.raises(IngestError, match=r"^empty\.pdf: empty file$"):
            PdfLoader().load(write(tmp_path, "empty.pdf", b""))
