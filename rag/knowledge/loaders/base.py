"""What every loader returns, and the protocol it implements."""

from __future__ import annotations

import bisect
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field


class PageSpan(BaseModel):
    """Where a page (or section) starts in the loaded text: character offset → page number."""

    model_config = ConfigDict(frozen=True)

    offset: int
    page: int


class LoadedDocument(BaseModel):
    """Plain text of one file plus what the format told us about it."""

    model_config = ConfigDict(frozen=True)

    path: str
    format: str  # md, txt, pdf, docx, html, hwpx, hwp
    text: str
    title: str = ""  # when the format carries one (front matter, <title>, docx core props)
    front_matter: dict[str, Any] = Field(default_factory=dict)
    pages: tuple[PageSpan, ...] = ()
    warnings: tuple[str, ...] = ()  # what could not be read (best-effort formats)
    markdown_headings: bool = False  # True when structure comes as '#' headings

    def page_at(self, offset: int) -> int | None:
        """The page a character offset falls on, or None for formats without pages.

        A binary search: the parser asks once per line, and a scan per call made big paged files quadratic.
        """
        index = bisect.bisect_right(self._page_offsets, offset) - 1
        return self.pages[index].page if index >= 0 else None

    @cached_property
    def _page_offsets(self) -> list[int]:
        return [span.offset for span in self.pages]


class DocumentLoader(Protocol):
    """Reads one format. `sniff` looks at the first bytes; `load` raises IngestError on bad input."""

    format: str
    extensions: tuple[str, ...]

    def sniff(self, head: bytes) -> bool: ...

    def load(self, path: Path) -> LoadedDocument: ...
