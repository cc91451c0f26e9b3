"""Line clean-up shared by the binary-format loaders: one logical line per paragraph, NFC-normalised."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from rag.errors import IngestError
from rag.lang.labels import PLACEHOLDER_TITLE
from rag.lang.script import HANGUL_SYLLABLE
from rag.text import normalize_text

# C0/C1 controls other than tab (line breaks are handled by splitting), noncharacters, and the
# replacement character that stands for a glyph the producer could not map.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd-\uffff]")
# Private-use code points are font-specific glyphs (the Hancom logo, Symbol-font bullets): noise as text.
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_SPACES = re.compile("[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_TITLE_APP_PREFIX = re.compile(r"^Microsoft\s+(?:Word|PowerPoint|Excel)\s+-\s+", re.I)
_TITLE_FILE_SUFFIX = re.compile(r"\.(?:hwpx?|docx?|pdf|txt|html?|pptx?|xlsx?|md)$", re.I)
_MAX_TITLE_CHARS = 100


def read_source(path: Path) -> bytes:
    """The file's bytes; an unreadable or empty file is an IngestError naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path.name}: cannot be read ({exc.strerror})") from exc
    if not raw:
        raise IngestError(f"{path.name}: empty file")
    return raw


def tidy_line(line: str) -> str:
    """NFC, control and private-use characters removed, runs of spaces collapsed, ends stripped."""
    line = _CONTROL.sub(" ", normalize_text(line))
    return _SPACES.sub(" ", _PRIVATE_USE.sub("", line)).strip()


def tidy_lines(lines: Iterable[str]) -> list[str]:
    """Every line tidied (embedded breaks split); blank runs become one blank; none at the ends."""
    tidy: list[str] = []
    for raw in lines:
        for piece in raw.splitlines() or [""]:
            line = tidy_line(piece)
            if line or (tidy and tidy[-1]):
                tidy.append(line)
    while tidy and not tidy[-1]:
        tidy.pop()
    return tidy


def table_lines(rows: Sequence[Sequence[Sequence[str]]]) -> list[str]:
    """Lines for a table given as rows → cells → the cell's lines.

    A data table (every cell one line) gives one line per row, cells joined by " | ", so a row keeps
    its meaning together. A layout table (a cell holding several paragraphs, or a single column) gives
    its cells' lines as they are, so the paragraphs inside stay one per line.
    """
    cells_by_row = [[tidy_lines(cell) for cell in row] for row in rows]
    cells_by_row = [[cell for cell in row if cell] for row in cells_by_row]
    layout = all(len(row) <= 1 for row in cells_by_row) or any(
        len(cell) > 1 for row in cells_by_row for cell in row
    )
    lines: list[str] = []
    for row in cells_by_row:
        if not row:
            continue
        if layout:
            for cell in row:
                lines.extend(cell)
            continue
        texts: list[str] = []
        for cell in row:
            text = cell[0]
            if not texts or texts[-1] != text:  # a merged cell repeats its text in each grid column
                texts.append(text)
        lines.append(" | ".join(texts))
    return lines


def clean_metadata_title(title: object) -> str:
    """A title from file metadata, or "" when it is a placeholder or an application's file label."""
    if not isinstance(title, str):
        return ""
    title = title.split("\x00", 1)[0]
    if not HANGUL_SYLLABLE.search(title) and re.search("[\u0080-\u00ff]", title):
        # Korean producers often write CP949 bytes where PDFDocEncoding is expected.
        try:
            repaired = title.encode("latin-1").decode("cp949")
        except (UnicodeEncodeError, UnicodeDecodeError):
            repaired = ""
        if HANGUL_SYLLABLE.search(repaired):
            title = repaired
    title = tidy_line(title)
    title = _TITLE_FILE_SUFFIX.sub("", _TITLE_APP_PREFIX.sub("", title)).strip()
    if PLACEHOLDER_TITLE.match(title) or len(title) > _MAX_TITLE_CHARS:
        return ""  # a placeholder, or a whole paragraph rather than a name
    return title


def title_in_text(title: str, lines: Sequence[str], *, first_lines: int = 15) -> str:
    """`title` when one of the first lines of the text says it, else "".

    Metadata titles are often stale: 한글 fills the title with the first line the file ever had, and
    templates carry theirs into every copy ("본문내용", "1111"). A title the text itself shows is safe.
    """
    key = _title_key(title)
    if len(key) < 2:
        return ""
    for line in [line for line in lines if line.strip()][:first_lines]:
        line_key = _title_key(line)
        if not line_key:
            continue
        if (key in line_key and 2 * len(key) >= len(line_key)) or (line_key in key and 2 * len(line_key) >= len(key)):
            return title
    return ""


def _title_key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def join_text(blocks: Iterable[Sequence[str]]) -> tuple[str, list[int]]:
    """Non-empty blocks of lines (pages, sections) joined with a blank line between, and each one's offset."""
    text = ""
    offsets: list[int] = []
    for lines in blocks:
        if text:
            text += "\n\n"
        offsets.append(len(text))
        text += "\n".join(lines)
    return text, offsets
