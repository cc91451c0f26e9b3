"""HTML loader (standard-library html.parser): block elements become lines; scripts, styles, navigation dropped."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.numbering import format_number
from rag.knowledge.loaders.textlines import read_source, table_lines, tidy_line, tidy_lines

_SKIPPED = {"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "canvas",
            "select", "button"}
_BLOCKS = {"address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details", "dialog",
           "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
           "h5", "h6", "header", "hr", "html", "legend", "li", "main", "ol", "p", "pre", "section", "summary",
           "ul"}
_OL_STYLES = {"1": "decimal", "a": "lower_letter", "A": "upper_letter", "i": "lower_roman", "I": "upper_roman"}
_META_CHARSET = re.compile(rb"""<meta[^<>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# A comment's body stops at its first `-->` and the comments are matched possessively: `.*?` there let each
# comment swallow the next ones, so 26 `<!---->` took 23 s and each two more took four times as long.
_SIGNATURE = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--(?:[^-]|-(?!->))*-->\s*)*+<(?:!doctype\s+html|html[\s>]|head[\s>])", re.I
)


@dataclass
class _Table:
    rows: list[list[list[str]]] = field(default_factory=list)
    caption: list[str] = field(default_factory=list)
    cell: list[str] | None = None  # the open cell's lines

    def open_cell(self) -> None:
        if not self.rows:
            self.rows.append([])
        self.cell = []
        self.rows[-1].append(self.cell)


class _TextExtractor(HTMLParser):
    """Collects lines: text between block boundaries is one line; tables go through `table_lines`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.title = ""
        self.first_heading = ""
        self._buffer: list[str] = []
        self._skipping: list[str] = []
        self._tables: list[_Table] = []
        self._lists: list[list[int | str]] = []  # [next number, style] per <ol>; [0, ""] per <ul>
        self._in_title = False
        self._in_h1 = False
        self._h1_done = False
        self._pre = 0

    # -- where text goes ---------------------------------------------------

    def _sink(self) -> list[str]:
        if not self._tables:
            return self.lines
        table = self._tables[-1]
        return table.cell if table.cell is not None else table.caption

    def _flush(self) -> None:
        text = "".join(self._buffer)
        self._buffer = []
        if text.strip():
            self._sink().append(text)

    # -- parser callbacks --------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.append(tag)
            return
        if tag in _SKIPPED:
            self._skipping.append(tag)
            return
        if tag == "title":
            self._in_title = True
        elif tag == "h1":
            self._in_h1 = True
        elif tag == "pre":
            self._pre += 1
        if tag in _BLOCKS:
            self._flush()
        if tag == "table":
            self._flush()
            self._tables.append(_Table())
        elif tag == "tr" and self._tables:
            self._flush()
            self._tables[-1].rows.append([])
            self._tables[-1].cell = None
        elif tag in ("td", "th") and self._tables:
            self._flush()
            self._tables[-1].open_cell()
        elif tag == "ol":
            values = dict(attrs)
            start = values.get("start") or "1"
            self._lists.append([int(start) if start.lstrip("-").isdigit() else 1,
                                _OL_STYLES.get(values.get("type") or "1", "decimal")])
        elif tag == "ul":
            self._lists.append([0, ""])
        elif tag == "li" and self._lists and self._lists[-1][1]:
            number, style = self._lists[-1]
            self._buffer.append(f"{format_number(int(number), str(style))}. ")
            self._lists[-1][0] = int(number) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <br/>, <hr/>, <svg/>: nothing to skip inside, only a boundary.
        if not self._skipping and tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if tag == "title":
            self._in_title = False
        elif tag == "h1":
            self._in_h1 = False
            self._h1_done = bool(self.first_heading.strip())
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
        elif tag in ("ol", "ul") and self._lists:
            self._lists.pop()
        if tag in _BLOCKS or tag in ("td", "th", "tr"):
            self._flush()
        if tag in ("td", "th") and self._tables:
            self._tables[-1].cell = None
        elif tag == "table" and self._tables:
            self._flush()
            table = self._tables.pop()
            self._sink().extend([*table.caption, *table_lines(table.rows)])

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._in_title:
            self.title += data
            return
        if self._in_h1 and not self._h1_done:
            self.first_heading += data
        if self._pre:
            pieces = data.split("\n")
            for piece in pieces[:-1]:
                self._buffer.append(piece)
                self._flush()
            self._buffer.append(pieces[-1])
        else:
            self._buffer.append(re.sub(r"\s+", " ", data))

    def close(self) -> None:
        super().close()
        self._flush()
        while self._tables:  # tables left open by sloppy markup
            table = self._tables.pop()
            self._sink().extend([*table.caption, *table_lines(table.rows)])


def decode_html(raw: bytes) -> str:
    """Bytes → text: a BOM, then the <meta charset>, then UTF-8, then CP949 (older Korean sites)."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                          (codecs.BOM_UTF16_BE, "utf-16-be")):
        if raw.startswith(bom):
            return raw[len(bom):].decode(encoding, errors="replace")
    declared = _META_CHARSET.search(raw[:4096])
    candidates = []
    if declared:
        name = declared.group(1).decode("ascii").lower()
        # EUC-KR pages routinely contain CP949-only syllables; CP949 is its superset.
        candidates.append("cp949" if name in ("euc-kr", "euckr", "ks_c_5601-1987", "x-windows-949") else name)
    candidates += ["utf-8", "cp949"]
    for encoding in candidates:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return raw.decode("utf-8", errors="replace")


class HtmlLoader:
    """Loads `.html`/`.htm`: visible text, one line per block element; `<title>` (else the first h1) as title."""

    format = "html"
    extensions = (".html", ".htm", ".xhtml")

    def sniff(self, head: bytes) -> bool:
        if head.startswith(codecs.BOM_UTF8):
            head = head[len(codecs.BOM_UTF8):]
        return bool(_SIGNATURE.match(head[:2048]))

    def load(self, path: Path) -> LoadedDocument:
        raw = read_source(path)
        if b"\x00" in raw and not raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            raise IngestError(f"{path.name}: binary content, not an HTML page")
        extractor = _TextExtractor()
        extractor.feed(decode_html(raw))
        extractor.close()
        lines = tidy_lines(extractor.lines)
        if not lines:
            raise IngestError(f"{path.name}: the HTML page has no visible text")
        title = tidy_line(extractor.title) or tidy_line(extractor.first_heading)
        return LoadedDocument(path=str(path), format=self.format, text="\n".join(lines), title=title)
