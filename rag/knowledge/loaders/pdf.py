"""PDF loader (pypdf): text per page with page spans; lines a PDF wrapped mid-sentence are rejoined."""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from collections import Counter
from pathlib import Path

from pypdf import PasswordType, PdfReader

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument, PageSpan
from rag.knowledge.loaders.textlines import clean_metadata_title, join_text, read_source, tidy_line, title_in_text
from rag.lang.reference import SUBITEM_START, UNIT_START
from rag.lang.script import DOT_LEADER_ENTRY

logger = logging.getLogger(__name__)

# A line that starts a new unit (`UNIT_START`: 조, 장, 부칙, 별표, 항, 호, 목, bullets); "<개정 …>" or "[본조신설]"
# marks close the paragraph they follow.
# A line that ends a sentence or a mark: "…한다.", "<개정 2024. 1. 1.>", "[본조신설]", "다음과 같다:".
# (「…」 only closes a name: "「근로기준법」" at the end of a line says nothing.)
_ENDS_UNIT = re.compile(r"[.。!?:;>\]]$")
_PAGE_NUMBER = re.compile(
    r"^(?:[-–—(\[]\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*[-–—)\]])?$|^\d{1,4}\s*/\s*\d{1,4}$", re.I
)
# A line at least this share of the page's widest line is "full", i.e. the PDF may have wrapped it.
_FULL_LINE_SHARE = 0.8
# A line is also wrapped when the next line's first word would not have fitted (widths are estimates).
_NO_ROOM_SHARE = 0.95
# Fewer visible characters per page than this means there is no real text layer.
_SCANNED_CHARS_PER_PAGE = 10


def display_width(text: str) -> int:
    """Rough printed width: wide (CJK) characters count twice."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def starts_unit(line: str, *, last_item: str = "") -> bool:
    """True when `line` opens a new unit. `last_item` is the latest 목 letter seen: "다. text" after "나." is
    item 다; elsewhere, or alone, or before "다만", it ends a sentence the PDF wrapped ("…아니한" / "다.")."""
    item = SUBITEM_START.match(line)
    if item and item.group(1) == "다":
        rest = line[item.end():].strip()
        if last_item != "나" or not rest or rest.startswith("다만"):
            return False
    return bool(UNIT_START.match(line))


def is_wrapped(line: str, following: str, *, full_width: int, last_item: str = "", spaced: bool = False) -> bool:
    """True when `following` continues `line` (a PDF line wrap), judged from shapes only.

    `spaced`: the producer keeps the space at a wrap and `line` ends with one, so even a sentence end
    ("…적용한다. " / "다만, …") is a wrap inside the paragraph rather than its end.
    """
    current, nxt = line.strip(), following.strip()
    if not current or not nxt or full_width <= 0:
        return False
    # A date cut after a dot ("<개정 2020. 2. 4., 2023." / "3. 14.>") ends a line with a period mid-sentence.
    date_cut = current.endswith(".") and current[-2:-1].isdigit() and nxt[:1].isdigit()
    if _ENDS_UNIT.search(current) and not spaced and not date_cut:
        return False
    if starts_unit(nxt, last_item=last_item):
        return False
    width = display_width(current)
    # Full, or too full for the next line's first word: a long word wraps early.
    return (width >= _FULL_LINE_SHARE * full_width
            or width + 1 + display_width(nxt.split(" ", 1)[0]) > _NO_ROOM_SHARE * full_width)


def join_wrapped_pages(pages: list[list[str]], *, keeps_wrap_spaces: bool) -> list[list[str]]:
    """One logical line per paragraph: lines the PDF wrapped mid-sentence are joined, also across a page
    break (the continuation joins the paragraph on the page where it started).

    `pages` hold raw lines, trailing spaces kept. When the producer keeps the space at a wrap
    (`keeps_wrap_spaces`), a wrap without one split a word ("대해서" / "도", "2024.1" / "2.") and
    joins without a space.
    """
    joined_pages: list[list[str]] = []
    paragraph_page: list[str] = []  # the page list holding the paragraph being continued
    previous = previous_raw = ""  # the physical line before, which decides whether it was wrapped
    previous_width = 0  # the widest line on the previous line's page
    last_item = ""
    for lines in pages:
        tidy = [tidy_line(line) for line in lines]
        full_width = max((display_width(line) for line in tidy), default=0)
        joined: list[str] = []
        joined_pages.append(joined)
        for raw, line in zip(lines, tidy, strict=True):
            if not line:
                previous = previous_raw = ""
                continue
            spaced = keeps_wrap_spaces and previous_raw[-1:].isspace()
            if previous and is_wrapped(previous, line, full_width=previous_width, last_item=last_item, spaced=spaced):
                # With the producer keeping spaces at wraps, a wrap without one broke a word or a number.
                mid_word = keeps_wrap_spaces and not spaced and _glued(previous[-1], line[0])
                if previous.endswith("-") and previous[-2:-1].isalpha() and line[0].islower():
                    paragraph_page[-1] = paragraph_page[-1][:-1] + line  # English hyphenation
                else:
                    paragraph_page[-1] += ("" if mid_word else " ") + line
            else:
                joined.append(line)
                paragraph_page = joined
                item = SUBITEM_START.match(line)
                if item:
                    last_item = item.group(1)
                elif UNIT_START.match(line):
                    last_item = ""  # a new article, paragraph or item: any 목 list restarts
            previous, previous_raw, previous_width = line, raw, full_width
    return joined_pages


def _glued(last: str, first: str) -> bool:
    """Whether two characters met at a wrap without a space belong to one token. Only punctuation followed
    by a Latin letter is taken as two tokens: table cells a PDF ran together ("…무시)" / "bit 3")."""
    return last.isalnum() or not (first.isascii() and first.isalpha())


def _wrap_keeps_spaces(pages: list[list[str]]) -> bool:
    """Whether this producer leaves the space at the end of a wrapped line (Hancom, Word do)."""
    candidates = spaced = 0
    for lines in pages:
        tidy = [tidy_line(line) for line in lines]
        full_width = max((display_width(line) for line in tidy), default=0)
        for index in range(len(lines) - 1):
            if is_wrapped(tidy[index], tidy[index + 1], full_width=full_width):
                candidates += 1
                spaced += lines[index][-1:].isspace()
    return candidates > 0 and spaced >= 0.3 * candidates


def _running_lines(pages: list[list[str]]) -> set[str]:
    """Headers and footers: the same line at the top or bottom of many pages."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for lines in pages:
        edge = [tidy_line(line) for line in lines if line.strip()]
        counts.update({_running_key(line) for line in edge[:2] + edge[-2:]})
    # A document bound from parts has one running head per part, hence well under half the pages.
    needed = max(3, 0.3 * len(pages))
    return {key for key, count in counts.items() if key and count >= needed}


def _running_key(line: str) -> str:
    """The line with its page number masked ("취업규칙 - 3 -"); lines with more numbers stay as they are."""
    return re.sub(r"\d+", "#", line) if len(re.findall(r"\d+", line)) == 1 else line


def _without_running_lines(lines: list[str], running: set[str]) -> list[str]:
    positions = [i for i, line in enumerate(lines) if line.strip()]
    edge = set(positions[:2] + positions[-2:])
    kept = []
    for index, line in enumerate(lines):
        text = tidy_line(line)
        if index in edge and (_running_key(text) in running or _PAGE_NUMBER.match(text)):
            continue
        if DOT_LEADER_ENTRY.search(text):  # a table-of-contents entry would repeat every article header
            continue
        kept.append(line)
    return kept


def _page_list(numbers: list[int]) -> str:
    """[3, 4, 5, 9] → "3–5, 9"."""
    ranges: list[str] = []
    start = prev = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        ranges.append(f"{start}–{prev}" if prev != start else str(start))
        if number is not None:
            start = prev = number
    return ", ".join(ranges)


class PdfLoader:
    """Loads `.pdf` with pypdf: page text with page spans, and the metadata title when the text confirms it."""

    format = "pdf"
    extensions = (".pdf",)

    def sniff(self, head: bytes) -> bool:
        # The spec allows a little junk before the header.
        return b"%PDF-" in head[:1024]

    def load(self, path: Path) -> LoadedDocument:
        reader = self._open(path)
        warnings: list[str] = []
        raw_pages: list[list[str]] = []
        for number, page in enumerate(reader.pages, start=1):
            try:
                raw_pages.append((page.extract_text() or "").splitlines())
            except Exception as exc:  # pypdf raises many error types on damaged content streams
                logger.debug("pdf page %d of %s unreadable", number, path.name, exc_info=True)
                warnings.append(f"page {number}: text could not be extracted ({type(exc).__name__})")
                raw_pages.append([])
        if not raw_pages:
            raise IngestError(f"{path.name}: the PDF has no pages")

        running = _running_lines(raw_pages)
        pages = [_without_running_lines(lines, running) for lines in raw_pages]
        page_lines = join_wrapped_pages(pages, keeps_wrap_spaces=_wrap_keeps_spaces(pages))

        visible = sum(len(line.replace(" ", "")) for lines in page_lines for line in lines)
        if visible < _SCANNED_CHARS_PER_PAGE * len(page_lines):
            raise IngestError(
                f"{path.name}: no extractable text in {len(page_lines)} page(s); it is probably a scanned "
                "image. Run OCR on it (for example ocrmypdf) and ingest the result"
            )
        empty = [number for number, lines in enumerate(page_lines, start=1) if not lines]
        if empty:
            warnings.append(f"pages without text (scanned images?): {_page_list(empty)}")

        kept = [(number, lines) for number, lines in enumerate(page_lines, start=1) if lines]
        text, offsets = join_text(lines for _, lines in kept)
        spans = tuple(PageSpan(offset=offset, page=number)
                      for offset, (number, _) in zip(offsets, kept, strict=True))
        title = title_in_text(self._title(reader), text.splitlines())
        return LoadedDocument(path=str(path), format=self.format, text=text, title=title,
                              pages=spans, warnings=tuple(warnings))

    def _open(self, path: Path) -> PdfReader:
        raw = read_source(path)
        try:
            reader = PdfReader(io.BytesIO(raw))
        except Exception as exc:  # pypdf raises many error types on damaged files; all mean "unreadable"
            raise IngestError(f"{path.name}: damaged or incomplete PDF; it cannot be opened ({exc})") from exc
        if reader.is_encrypted:
            # Many PDFs are encrypted only to restrict printing or editing: the empty password opens them.
            try:
                opened = reader.decrypt("")
            except Exception as exc:  # unsupported algorithm, or AES without the cryptography package
                raise IngestError(
                    f"{path.name}: encrypted PDF that cannot be decrypted here ({exc})"
                ) from exc
            if opened == PasswordType.NOT_DECRYPTED:
                raise IngestError(
                    f"{path.name}: password-protected PDF; save a copy without the password and ingest that"
                )
        try:
            len(reader.pages)
        except Exception as exc:  # a broken page tree only shows when the pages are listed
            raise IngestError(f"{path.name}: damaged PDF; its page list cannot be read ({exc})") from exc
        return reader

    def _title(self, reader: PdfReader) -> str:
        try:
            metadata = reader.metadata
        except Exception:  # a damaged info dictionary only costs the title
            logger.debug("pdf metadata unreadable", exc_info=True)
            return ""
        return clean_metadata_title(metadata.title) if metadata else ""
