"""Word (.docx) loader: body paragraphs and tables in document order, automatic list numbers included."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import docx
from docx.opc.constants import RELATIONSHIP_TYPE
from lxml import etree

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.numbering import ListCounters, ListLevel
from rag.knowledge.loaders.textlines import (
    clean_metadata_title,
    read_source,
    table_lines,
    tidy_lines,
    title_in_text,
)
from rag.lang.labels import TOC_STYLE

logger = logging.getLogger(__name__)

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _w(tag: str) -> str:
    return f"{{{_W}}}{tag}"


def _val(element: etree._Element | None, default: str = "") -> str:
    if element is None:
        return default
    return element.get(_w("val"), default)


# Word's numFmt values → numbering.format_number styles.
_WORD_STYLES = {
    "decimal": "decimal", "decimalZero": "decimal_zero", "decimalEnclosedCircle": "circled",
    "decimalEnclosedCircleChinese": "circled", "ganada": "hangul_syllable", "chosung": "hangul_jamo",
    "upperLetter": "upper_letter", "lowerLetter": "lower_letter", "upperRoman": "upper_roman",
    "lowerRoman": "lower_roman", "koreanDigital": "sino_korean", "koreanDigital2": "ideograph",
    "koreanLegal": "sino_korean", "koreanCounting": "sino_korean", "none": "none", "bullet": "none",
}
_SUFFIX = {"tab": " ", "space": " ", "nothing": ""}
# Elements whose text is not part of the paragraph line: text boxes, deleted text, field codes.
_SKIPPED_RUN_CONTENT = {_w("txbxContent"), _w("del"), _w("instrText"), _w("delText")}


class _WordNumbering:
    """Numbering definitions (numbering.xml) and the style links, rendering each list paragraph's label."""

    def __init__(self, document: docx.document.Document) -> None:
        self.levels_by_num: dict[str, dict[int, ListLevel]] = {}
        self.abstract_by_num: dict[str, str] = {}
        self.suffix: dict[tuple[str, int], str] = {}
        self.style_levels: dict[str, int] = {}  # a paragraph style linked to a list level → its ilvl
        self.restarts: dict[str, dict[int, int]] = {}
        self.counters = ListCounters(re.compile(r"%([1-9])"))
        self.started: set[str] = set()
        self.styles: dict[str, etree._Element] = {}
        part = document.part
        try:
            numbering = part.part_related_by(RELATIONSHIP_TYPE.NUMBERING).element
        except KeyError:
            numbering = None
        try:
            styles = part.part_related_by(RELATIONSHIP_TYPE.STYLES).element
            self.styles = {style.get(_w("styleId")): style for style in styles.iterfind(_w("style"))}
        except KeyError:
            pass
        if numbering is not None:
            self._read(numbering)

    def _read(self, numbering: etree._Element) -> None:
        abstracts: dict[str, dict[int, ListLevel]] = {}
        for abstract in numbering.iterfind(_w("abstractNum")):
            abstract_id = abstract.get(_w("abstractNumId"), "")
            levels: dict[int, ListLevel] = {}
            for lvl in abstract.iterfind(_w("lvl")):
                ilvl = int(lvl.get(_w("ilvl"), "0"))
                style = _WORD_STYLES.get(_val(lvl.find(_w("numFmt")), "decimal"), "decimal")
                template = "" if style == "none" else _val(lvl.find(_w("lvlText")))
                levels[ilvl] = ListLevel(template=template, style=style,
                                         start=int(_val(lvl.find(_w("start")), "1") or 1))
                self.suffix[(abstract_id, ilvl)] = _SUFFIX.get(_val(lvl.find(_w("suff")), "tab"), " ")
                linked_style = _val(lvl.find(_w("pStyle")))
                if linked_style:
                    self.style_levels.setdefault(linked_style, ilvl)
            abstracts[abstract_id] = levels
        for num in numbering.iterfind(_w("num")):
            num_id = num.get(_w("numId"), "")
            abstract_id = _val(num.find(_w("abstractNumId")))
            self.abstract_by_num[num_id] = abstract_id
            self.levels_by_num[num_id] = abstracts.get(abstract_id, {})
            overrides = {}
            for override in num.iterfind(_w("lvlOverride")):
                start = override.find(_w("startOverride"))
                if start is not None:
                    overrides[int(override.get(_w("ilvl"), "0"))] = int(_val(start, "1") or 1)
            if overrides:
                self.restarts[num_id] = overrides

    def label(self, paragraph: etree._Element) -> str:
        """The generated number of a list paragraph with its separator ("제3조 "), or ""."""
        reference = self._reference(paragraph)
        if reference is None:
            return ""
        num_id, ilvl = reference
        levels = self.levels_by_num.get(num_id)
        if not levels:
            return ""
        # Lists that share a definition continue each other unless one restarts (Word's rule).
        key = self.abstract_by_num.get(num_id, num_id)
        if num_id not in self.started:
            self.started.add(num_id)
            for level, value in self.restarts.get(num_id, {}).items():
                self.counters.restart(key, level, value)
        label = self.counters.next_label(key, ilvl, levels)
        return label + self.suffix.get((key, ilvl), " ") if label else ""

    def _reference(self, paragraph: etree._Element) -> tuple[str, int] | None:
        ppr = paragraph.find(_w("pPr"))
        num_pr = ppr.find(_w("numPr")) if ppr is not None else None
        style_id = _val(ppr.find(_w("pStyle"))) if ppr is not None else ""
        if num_pr is None:
            num_pr, style_id = self._style_num_pr(style_id)
        if num_pr is None:
            return None
        num_id = _val(num_pr.find(_w("numId")))
        if not num_id or num_id == "0":
            return None
        ilvl_element = num_pr.find(_w("ilvl"))
        if ilvl_element is not None:
            return num_id, int(_val(ilvl_element, "0") or 0)
        return num_id, self.style_levels.get(style_id, 0)

    def _style_num_pr(self, style_id: str) -> tuple[etree._Element | None, str]:
        seen: set[str] = set()
        while style_id and style_id not in seen:
            seen.add(style_id)
            style = self.styles.get(style_id)
            if style is None:
                break
            num_pr = style.find(f"{_w('pPr')}/{_w('numPr')}")
            if num_pr is not None:
                return num_pr, style_id
            style_id = _val(style.find(_w("basedOn")))
        return None, ""

    def style_name(self, paragraph: etree._Element) -> str:
        ppr = paragraph.find(_w("pPr"))
        style_id = _val(ppr.find(_w("pStyle"))) if ppr is not None else ""
        style = self.styles.get(style_id)
        name = _val(style.find(_w("name"))) if style is not None else ""
        return name or style_id


def paragraph_text(paragraph: etree._Element) -> str:
    """The visible text of a w:p: runs, hyperlinks, fields' results, insertions; not deletions or text boxes."""
    parts: list[str] = []

    def walk(element: etree._Element) -> None:
        for child in element:
            tag = child.tag
            if tag in _SKIPPED_RUN_CONTENT:
                continue
            if tag == _w("rPr") and child.find(_w("vanish")) is not None:
                return  # hidden run
            if tag == _w("t"):
                parts.append(child.text or "")
            elif tag == _w("tab") and element.tag == _w("r"):
                parts.append("\t")
            elif tag in (_w("br"), _w("cr")):
                parts.append("\n")
            elif tag == _w("noBreakHyphen"):
                parts.append("-")
            elif tag != _w("pPr"):
                walk(child)

    walk(paragraph)
    return "".join(parts)


def _wrapped_children(parent: etree._Element, tag: str) -> Iterator[etree._Element]:
    """Children with `tag`, looking through content-control and custom-XML wrappers."""
    for child in parent:
        if child.tag == tag:
            yield child
        elif child.tag in (_w("sdt"), _w("customXml")):
            content = child.find(_w("sdtContent"))
            yield from _wrapped_children(content if content is not None else child, tag)


class DocxLoader:
    """Loads `.docx` with python-docx: paragraphs and table rows in order; the core-properties title."""

    format = "docx"
    extensions = (".docx",)

    def sniff(self, head: bytes) -> bool:
        # An OOXML package; `load` tells a Word file from a spreadsheet by its content type.
        return (head.startswith(b"PK\x03\x04") and (b"word/" in head or b"[Content_Types].xml" in head)
                and b"application/hwp+zip" not in head)

    def load(self, path: Path) -> LoadedDocument:
        raw = read_source(path)
        try:
            document = docx.Document(io.BytesIO(raw))
        except Exception as exc:  # python-docx raises zip, XML and package errors alike
            raise IngestError(f"{path.name}: not a readable Word (.docx) document ({exc})") from exc
        numbering = _WordNumbering(document)
        lines = tidy_lines(self._blocks(document.element.body, numbering))
        if not any(lines):
            raise IngestError(f"{path.name}: the Word document contains no text")
        title = title_in_text(clean_metadata_title(document.core_properties.title), lines)
        return LoadedDocument(path=str(path), format=self.format, text="\n".join(lines), title=title)

    def _blocks(self, container: etree._Element, numbering: _WordNumbering) -> Iterator[str]:
        for child in container:
            if child.tag == _w("p"):
                if TOC_STYLE.match(numbering.style_name(child)):
                    continue
                label, text = numbering.label(child), paragraph_text(child)
                yield label + text if text.strip() else text
            elif child.tag == _w("tbl"):
                yield from table_lines(self._rows(child, numbering))
            elif child.tag == _w("sdt"):
                if self._is_toc(child):
                    continue
                content = child.find(_w("sdtContent"))
                if content is not None:
                    yield from self._blocks(content, numbering)
            elif child.tag in (_w("customXml"), _w("ins")):
                yield from self._blocks(child, numbering)

    def _rows(self, table: etree._Element, numbering: _WordNumbering) -> list[list[list[str]]]:
        rows: list[list[list[str]]] = []
        for tr in _wrapped_children(table, _w("tr")):
            cells: list[list[str]] = []
            for tc in _wrapped_children(tr, _w("tc")):
                merge = tc.find(f"{_w('tcPr')}/{_w('vMerge')}")
                if merge is not None and _val(merge, "continue") != "restart":
                    continue  # a vertically merged cell's text lives in its first row
                cells.append(list(self._blocks(tc, numbering)))
            rows.append(cells)
        return rows

    def _is_toc(self, sdt: etree._Element) -> bool:
        gallery = sdt.find(f"{_w('sdtPr')}/{_w('docPartObj')}/{_w('docPartGallery')}")
        return gallery is not None and "contents" in _val(gallery).lower()
