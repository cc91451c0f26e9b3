"""HWPX (OWPML, 한글 2014+) loader: a zip of XML parts read with the standard library.

Text is in Contents/section*.xml as hp:p paragraphs of hp:run/hp:t runs; tables, text boxes and notes
hold further paragraphs in hp:subList. Element names are matched without their namespace, because
Hancom has shipped several namespace URIs (2011, 2016, the 2024 OWPML standard).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.numbering import ListCounters, ListLevel
from rag.knowledge.loaders.textlines import (
    clean_metadata_title,
    join_text,
    read_source,
    table_lines,
    tidy_lines,
    title_in_text,
)

logger = logging.getLogger(__name__)

_SECTION = re.compile(r"^Contents/section(\d+)\.xml$", re.I)
# Page furniture and annotations, not body text.
_SKIPPED = {"header", "footer", "hiddenComment", "masterPage", "memo", "fieldBegin", "fieldEnd",
            "shapeComment", "parameters"}
# A part larger than this after decompression is refused (a zip bomb, not a regulation).
_MAX_PART_BYTES = 256 * 1024 * 1024
# HWPX numFormat values → numbering.format_number styles.
_HWPX_STYLES = {
    "DIGIT": "decimal", "CIRCLED_DIGIT": "circled", "ROMAN_CAPITAL": "upper_roman", "ROMAN_SMALL": "lower_roman",
    "LATIN_CAPITAL": "upper_letter", "LATIN_SMALL": "lower_letter", "CIRCLED_LATIN_CAPITAL": "upper_letter",
    "CIRCLED_LATIN_SMALL": "lower_letter", "HANGUL_SYLLABLE": "hangul_syllable",
    "CIRCLED_HANGUL_SYLLABLE": "circled_hangul", "HANGUL_JAMO": "hangul_jamo", "CIRCLED_HANGUL_JAMO": "hangul_jamo",
    "HANGUL_PHONETIC": "sino_korean", "IDEOGRAPH": "ideograph", "CIRCLED_IDEOGRAPH": "ideograph",
}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class HwpxNumbering:
    """문단 번호 and 개요 번호 from Contents/header.xml, rendering each numbered paragraph's label."""

    def __init__(self, header: ElementTree.Element | None) -> None:
        self.lists: dict[str, dict[int, ListLevel]] = {}
        self.headings: dict[str, tuple[str, str, int]] = {}  # paraPr id → (type, numbering id, level)
        self.counters = ListCounters(re.compile(r"\^(10|[1-9])"))
        if header is None:
            return
        for element in header.iter():
            name = _local(element.tag)
            if name == "numbering":
                levels: dict[int, ListLevel] = {}
                for head in element:
                    if _local(head.tag) != "paraHead":
                        continue
                    level = int(head.get("level", "1") or 1) - 1
                    style = _HWPX_STYLES.get(head.get("numFormat", "DIGIT"), "decimal")
                    levels[level] = ListLevel(template=head.text or "", style=style,
                                              start=int(head.get("start", "1") or 1))
                self.lists[element.get("id", "")] = levels
            elif name == "paraPr":
                for child in element.iter():
                    if _local(child.tag) == "heading":
                        self.headings[element.get("id", "")] = (
                            child.get("type", "NONE"), child.get("idRef", "0"), int(child.get("level", "0") or 0)
                        )
                        break

    def label(self, paragraph: ElementTree.Element, outline_id: str) -> str:
        """The generated number of a paragraph with a trailing space ("제3조 "), or ""."""
        heading = self.headings.get(paragraph.get("paraPrIDRef", ""))
        if heading is None:
            return ""
        kind, numbering_id, level = heading
        if kind == "OUTLINE":
            numbering_id = outline_id
        elif kind != "NUMBER":
            return ""  # NONE, or a bullet: no text worth keeping
        levels = self.lists.get(numbering_id)
        if not levels:
            return ""
        label = self.counters.next_label(f"{kind}:{numbering_id}", level, levels).strip()
        return f"{label} " if label else ""


class _SectionReader:
    """Turns one section's XML into lines, in reading order."""

    def __init__(self, numbering: HwpxNumbering) -> None:
        self.numbering = numbering
        self.outline_id = "1"

    def lines(self, section: ElementTree.Element) -> list[str]:
        for element in section.iter():
            if _local(element.tag) == "secPr":
                self.outline_id = element.get("outlineShapeIDRef", self.outline_id)
                break
        lines: list[str] = []
        for child in section:
            self._object(child, lines)
        return lines

    def _paragraph(self, paragraph: ElementTree.Element, lines: list[str]) -> None:
        text: list[str] = []
        nested: list[ElementTree.Element] = []
        for run in paragraph:
            if _local(run.tag) != "run":
                continue
            for item in run:
                if _local(item.tag) == "t":
                    text.append(_run_text(item))
                else:
                    nested.append(item)
        body = "".join(text)
        # An empty numbered paragraph still takes its number; its lone label would be noise.
        label = self.numbering.label(paragraph, self.outline_id)
        lines.append(label + body if body.strip() else body)
        for item in nested:
            self._object(item, lines)

    def _object(self, element: ElementTree.Element, lines: list[str]) -> None:
        name = _local(element.tag)
        if name in _SKIPPED:
            return
        if name == "p":
            self._paragraph(element, lines)
        elif name == "tbl":
            lines.extend(table_lines(self._rows(element)))
        else:
            for child in element:
                self._object(child, lines)

    def _rows(self, table: ElementTree.Element) -> list[list[list[str]]]:
        rows: list[list[list[str]]] = []
        for row in table:
            if _local(row.tag) != "tr":
                continue
            cells: list[list[str]] = []
            for cell in row:
                if _local(cell.tag) == "tc":
                    cell_lines: list[str] = []
                    for child in cell:
                        self._object(child, cell_lines)
                    cells.append(cell_lines)
            rows.append(cells)
        return rows


def _run_text(element: ElementTree.Element) -> str:
    """Text of an hp:t, with its inline children: tabs, line breaks, special spaces and hyphens."""
    parts = [element.text or ""]
    for child in element:
        name = _local(child.tag)
        if name == "lineBreak":
            parts.append("\n")
        elif name in ("tab", "nbSpace", "fwSpace"):
            parts.append(" ")
        elif name == "hyphen":
            parts.append("-")
        parts.append(child.tail or "")
    return "".join(parts)


class HwpxLoader:
    """Loads `.hwpx`: sections in numeric order, automatic paragraph numbers, the title from content.hpf."""

    format = "hwpx"
    extensions = (".hwpx",)

    def sniff(self, head: bytes) -> bool:
        if not head.startswith(b"PK\x03\x04"):
            return False
        # The first entry is an uncompressed "mimetype" naming the format, as in ODF and EPUB.
        return b"application/hwp+zip" in head[:512] or b"Contents/section" in head or b"Contents/content.hpf" in head

    def load(self, path: Path) -> LoadedDocument:
        raw = read_source(path)
        try:
            archive = zipfile.ZipFile(io.BytesIO(raw))
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise IngestError(f"{path.name}: damaged HWPX file (not a readable zip archive: {exc})") from exc
        with archive:
            return self._read(path, archive)

    def _read(self, path: Path, archive: zipfile.ZipFile) -> LoadedDocument:
        names = archive.namelist()
        manifest = self._part(path, archive, "META-INF/manifest.xml") if "META-INF/manifest.xml" in names else b""
        if b"encryption-data" in manifest:
            raise IngestError(f"{path.name}: password-protected HWPX; save a copy without the password and ingest that")
        sections = sorted((int(m.group(1)), name) for name in names if (m := _SECTION.match(name)))
        if not sections:
            raise IngestError(f"{path.name}: not an HWPX document (no Contents/section*.xml inside the zip)")

        warnings: list[str] = []
        header = self._xml(path, archive, "Contents/header.xml", warnings) if "Contents/header.xml" in names else None
        reader = _SectionReader(HwpxNumbering(header))
        blocks: list[list[str]] = []
        for _, name in sections:
            section = self._xml(path, archive, name, warnings)
            if section is None:
                continue
            lines = tidy_lines(reader.lines(section))
            if lines:
                blocks.append(lines)
        if not blocks:
            if warnings:
                raise IngestError(f"{path.name}: no section of the HWPX file could be read ({warnings[0]})")
            raise IngestError(f"{path.name}: the HWPX document contains no text")

        # No page spans: the file does not record where pages break, and a section is not a page.
        text, _ = join_text(blocks)
        title = title_in_text(self._title(path, archive), text.splitlines())
        return LoadedDocument(path=str(path), format=self.format, text=text, title=title,
                              warnings=tuple(warnings))

    def _part(self, path: Path, archive: zipfile.ZipFile, name: str) -> bytes:
        info = archive.getinfo(name)
        if info.file_size > _MAX_PART_BYTES:
            raise IngestError(f"{path.name}: {name} is implausibly large ({info.file_size} bytes unpacked)")
        try:
            return archive.read(name)
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
            raise IngestError(f"{path.name}: damaged HWPX file ({name} cannot be unpacked: {exc})") from exc

    def _xml(self, path: Path, archive: zipfile.ZipFile, name: str, warnings: list[str]) -> ElementTree.Element | None:
        try:
            return ElementTree.fromstring(self._part(path, archive, name))
        except (ElementTree.ParseError, IngestError) as exc:
            logger.debug("hwpx part %s of %s unreadable", name, path.name, exc_info=True)
            warnings.append(f"{name} could not be read ({exc})")
            return None

    def _title(self, path: Path, archive: zipfile.ZipFile) -> str:
        if "Contents/content.hpf" not in archive.namelist():
            return ""
        warnings: list[str] = []
        package = self._xml(path, archive, "Contents/content.hpf", warnings)
        if package is None:
            return ""
        for element in package.iter():
            if _local(element.tag) == "title":
                return clean_metadata_title(element.text or "")
        return ""
