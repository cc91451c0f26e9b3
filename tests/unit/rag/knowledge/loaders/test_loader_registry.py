"""LoaderRegistry: content sniffing beats the extension; every failure names the file and the problem."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest

from rag.errors import IngestError
from rag.knowledge.loaders import LoadedDocument, LoaderRegistry, default_loaders
from rag.knowledge.parser import RegulationParser
from tests.unit.rag.knowledge.loaders.document_factories import (
    SAMPLE_LINES,
    hwp_paragraph,
    hwpx_paragraph,
    hwpx_section,
    make_hwp,
    make_hwpx,
    make_pdf,
    write,
)


def _docx(lines: list[str]) -> bytes:
    document = docx.Document()
    for line in lines:
        document.add_paragraph(line)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _sample_files() -> dict[str, bytes]:
    html = "<!DOCTYPE html><html><body>" + "".join(f"<p>{line}</p>" for line in SAMPLE_LINES) + "</body></html>"
    return {
        "rules.pdf": make_pdf([SAMPLE_LINES[:5], SAMPLE_LINES[5:]]),
        "rules.docx": _docx(SAMPLE_LINES),
        "rules.hwpx": make_hwpx({0: hwpx_section("".join(hwpx_paragraph(line) for line in SAMPLE_LINES))}),
        "rules.hwp": make_hwp([b"".join(hwp_paragraph(line) for line in SAMPLE_LINES)]),
        "rules.html": html.encode(),
        "rules.txt": "\n".join(SAMPLE_LINES).encode("cp949"),
    }


class _ExplodingLoader:
    format = "boom"
    extensions = (".boom",)

    def sniff(self, head: bytes) -> bool:
        return True

    def load(self, path: Path) -> LoadedDocument:
        raise ValueError("unexpected structure")


class TestLoaderRegistry:
    def test_binary_formats_are_sniffed_before_text(self):
        assert [loader.format for loader in default_loaders()] == ["pdf", "hwpx", "docx", "hwp", "html", "md"]

    @pytest.mark.parametrize("name", list(_sample_files()))
    def test_every_format_yields_the_same_articles(self, tmp_path, name):
        loaded = LoaderRegistry().load(write(tmp_path, name, _sample_files()[name]))
        parsed = RegulationParser().parse(loaded, fallback_name="rules")

        assert loaded.format == name.rsplit(".", 1)[1]
        assert [a.article for a in parsed.articles] == ["제1조", "제2조", "제3조", "부칙"]
        article_2 = parsed.articles[1]
        assert (article_2.title, article_2.chapter) == ("적용 범위", "제1장")
        assert [p.marker for p in article_2.paragraphs] == ["①", "②"]

    def test_a_pdf_named_md_is_read_as_pdf(self, tmp_path):
        loaded = LoaderRegistry().load(write(tmp_path, "disguised.md", make_pdf([SAMPLE_LINES])))
        assert loaded.format == "pdf"
        assert SAMPLE_LINES[2] in loaded.text

    def test_an_hwpx_named_docx_is_read_as_hwpx(self, tmp_path):
        hwpx = make_hwpx({0: hwpx_section(hwpx_paragraph(SAMPLE_LINES[2]))})
        assert LoaderRegistry().load(write(tmp_path, "renamed.docx", hwpx)).format == "hwpx"

    def test_a_binary_file_named_md_is_reported_not_indexed(self, tmp_path):
        garbage = bytes(range(1, 256)) * 40  # control bytes throughout, no NUL
        with pytest.raises(IngestError, match=r"^image\.md: the content does not match the \.md extension"):
            LoaderRegistry().load(write(tmp_path, "image.md", garbage))

    def test_an_empty_file_is_reported(self, tmp_path):
        with pytest.raises(IngestError, match=r"^empty\.md: empty file$"):
            LoaderRegistry().load(write(tmp_path, "empty.md", b""))

    def test_an_unsupported_type_names_the_supported_ones(self, tmp_path):
        with pytest.raises(IngestError, match=r"^sheet\.xyz: unsupported file type '\.xyz' \(supported: \.docx, "):
            LoaderRegistry().load(write(tmp_path, "sheet.xyz", b"a,b\n1,2\n"))

    def test_an_unexpected_loader_failure_becomes_an_ingest_error(self, tmp_path):
        registry = LoaderRegistry([_ExplodingLoader()])
        reason = r"^x\.boom: could not be read as BOOM \(ValueError: unexpected structure\)$"
        with pytest.raises(IngestError, match=reason):
            registry.load(write(tmp_path, "x.boom", b"data"))
