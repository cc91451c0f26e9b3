"""DocxLoader: paragraphs and tables in order, Word's automatic numbers, and what is left out."""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from rag.errors import IngestError
from rag.knowledge.loaders.docx import DocxLoader
from tests.unit.rag.knowledge.loaders.document_factories import SAMPLE_LINES, write


def _save(document: docx.document.Document) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _add_article_numbering(document: docx.document.Document) -> None:
    """List 90: level 0 renders "제%1조" glued to the text, level 1 a circled number and a space."""
    numbering = document.part.numbering_part.element
    numbering.insert(0, parse_xml(
        f'<w:abstractNum {nsdecls("w")} w:abstractNumId="90">'
        '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:suff w:val="nothing"/>'
        '<w:lvlText w:val="제%1조"/></w:lvl>'
        '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimalEnclosedCircle"/>'
        '<w:suff w:val="space"/><w:lvlText w:val="%2"/></w:lvl>'
        "</w:abstractNum>"
    ))
    numbering.append(parse_xml(f'<w:num {nsdecls("w")} w:numId="90"><w:abstractNumId w:val="90"/></w:num>'))


def _numbered(document: docx.document.Document, text: str, level: int) -> None:
    paragraph = document.add_paragraph(text)
    paragraph._p.get_or_add_pPr().append(parse_xml(
        f'<w:numPr {nsdecls("w")}><w:ilvl w:val="{level}"/><w:numId w:val="90"/></w:numPr>'
    ))


class TestDocxLoader:
    def test_reads_paragraphs_and_tables_in_document_order(self, tmp_path):
        document = docx.Document()
        document.core_properties.title = "한빛 취업규칙"
        for line in SAMPLE_LINES[:5]:
            document.add_paragraph(line)
        table = document.add_table(rows=2, cols=2)
        for (row, col), text in {(0, 0): "구분", (0, 1): "일수", (1, 0): "연차휴가", (1, 1): "15일"}.items():
            table.cell(row, col).text = text
        for line in SAMPLE_LINES[5:]:
            document.add_paragraph(line)

        loaded = DocxLoader().load(write(tmp_path, "rules.docx", _save(document)))

        assert loaded.format == "docx"
        assert loaded.title == "한빛 취업규칙"
        assert loaded.text.splitlines() == [*SAMPLE_LINES[:5], "구분 | 일수", "연차휴가 | 15일", *SAMPLE_LINES[5:]]

    def test_renders_automatic_article_and_paragraph_numbers(self, tmp_path):
        document = docx.Document()
        _add_article_numbering(document)
        _numbered(document, "(목적) 이 규칙은 근무 조건을 정한다.", 0)
        _numbered(document, "(휴가) 연차휴가는 다음과 같다.", 0)
        _numbered(document, "입사 첫해에는 11일을 준다.", 1)
        _numbered(document, "그 다음 해부터는 15일을 준다.", 1)
        _numbered(document, "(병가) 병가는 연 60일 이내로 한다.", 0)
        _numbered(document, "진단서를 내야 한다.", 1)

        loaded = DocxLoader().load(write(tmp_path, "numbered.docx", _save(document)))

        assert loaded.text.splitlines() == [
            "제1조(목적) 이 규칙은 근무 조건을 정한다.",
            "제2조(휴가) 연차휴가는 다음과 같다.",
            "① 입사 첫해에는 11일을 준다.",
            "② 그 다음 해부터는 15일을 준다.",
            "제3조(병가) 병가는 연 60일 이내로 한다.",
            "① 진단서를 내야 한다.",
        ]

    def test_leaves_out_deleted_text_table_of_contents_and_hidden_runs(self, tmp_path):
        document = docx.Document()
        document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
        document.add_paragraph("제1조(목적)\t1", style="toc 1")
        paragraph = document.add_paragraph("제1조(목적) 이 규칙은 ")
        paragraph._p.append(parse_xml(
            f'<w:del {nsdecls("w")} w:id="1" w:author="a"><w:r><w:delText>예전 문구를 </w:delText></w:r></w:del>'
        ))
        paragraph.add_run("근무 조건을 정한다.")
        hidden = paragraph.add_run(" (작성자 메모)")
        hidden.font.hidden = True

        loaded = DocxLoader().load(write(tmp_path, "tracked.docx", _save(document)))

        assert loaded.text == "제1조(목적) 이 규칙은 근무 조건을 정한다."

    def test_single_column_box_keeps_its_paragraphs_as_lines(self, tmp_path):
        document = docx.Document()
        cell = document.add_table(rows=1, cols=1).cell(0, 0)
        cell.text = "제1조(목적) 이 규칙은 근무 조건을 정한다."
        cell.add_paragraph("제2조(정의) 직원이란 정규직을 말한다.")

        loaded = DocxLoader().load(write(tmp_path, "boxed.docx", _save(document)))

        assert loaded.text.splitlines() == [
            "제1조(목적) 이 규칙은 근무 조건을 정한다.",
            "제2조(정의) 직원이란 정규직을 말한다.",
        ]

    def test_stale_template_title_is_ignored(self, tmp_path):
        document = docx.Document()
        document.core_properties.title = "보고서 양식"
        for line in SAMPLE_LINES:
            document.add_paragraph(line)
        assert DocxLoader().load(write(tmp_path, "rules.docx", _save(document))).title == ""

    def test_document_without_text_is_reported(self, tmp_path):
        with pytest.raises(IngestError, match=r"^blank\.docx: the Word document contains no text$"):
            DocxLoader().load(write(tmp_path, "blank.docx", _save(docx.Document())))

    def test_zip_that_is_not_a_word_document_is_reported(self, tmp_path):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("notes.txt", "not a word document")
        with pytest.raises(IngestError, match=r"^notes\.docx: not a readable Word \(\.docx\) document"):
            DocxLoader().load(write(tmp_path, "notes.docx", out.getvalue()))
