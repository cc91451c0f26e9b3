"""Chooses the loader for a file: content sniffing first, the extension second."""

from __future__ import annotations

import logging
from pathlib import Path

from rag.errors import IngestError
from rag.knowledge.loaders.base import DocumentLoader, LoadedDocument
from rag.knowledge.loaders.docx import DocxLoader
from rag.knowledge.loaders.html import HtmlLoader
from rag.knowledge.loaders.hwp import HwpLoader
from rag.knowledge.loaders.hwpx import HwpxLoader
from rag.knowledge.loaders.markdown import MarkdownLoader
from rag.knowledge.loaders.pdf import PdfLoader

logger = logging.getLogger(__name__)

# Formats recognised only by their extension plus a plausibility check: their sniff never overrides
# another loader's extension (any text file would pass it).
_TEXT_FORMATS = ("md",)


class LoaderRegistry:
    """Holds the loaders; the binary formats register before text so sniffing sees them first."""

    def __init__(self, loaders: list[DocumentLoader] | None = None) -> None:
        self.loaders: list[DocumentLoader] = loaders if loaders is not None else default_loaders()

    @property
    def extensions(self) -> set[str]:
        return {ext for loader in self.loaders for ext in loader.extensions}

    def supports(self, path: Path) -> bool:
        return path.suffix.lower() in self.extensions

    def load(self, path: Path) -> LoadedDocument:
        """The loaded document; IngestError (naming the file and the problem) when it cannot be read."""
        loader = self.choose(path)
        try:
            return loader.load(path)
        except IngestError:
            raise
        except Exception as exc:  # a loader bug or an unforeseen library error must not stop a whole ingest
            # The IngestError below reaches the ingest report; the traceback is for `-v` (INFO), not for users.
            logger.info("loader %s failed on %s", loader.format, path, exc_info=True)
            raise IngestError(
                f"{path.name}: could not be read as {loader.format.upper()} ({type(exc).__name__}: {exc})"
            ) from exc

    def choose(self, path: Path) -> DocumentLoader:
        """The loader for `path`: what its first bytes say it is, else what its extension says."""
        try:
            with path.open("rb") as handle:
                head = handle.read(8192)
        except OSError as exc:
            raise IngestError(f"{path.name}: cannot be read ({exc.strerror})") from exc
        if not head:
            raise IngestError(f"{path.name}: empty file")
        suffix = path.suffix.lower()
        by_extension = [lo for lo in self.loaders if suffix in lo.extensions]
        # A file whose bytes say another format (a PDF named .md) is read as what it is.
        for loader in self.loaders:
            if loader.format not in _TEXT_FORMATS and loader not in by_extension and loader.sniff(head):
                return loader
        for loader in by_extension:
            if loader.sniff(head):
                return loader
        if by_extension:
            raise IngestError(
                f"{path.name}: the content does not match the {suffix} extension (binary, damaged, or another "
                "format under that name); not indexed"
            )
        supported = ", ".join(sorted(self.extensions))
        raise IngestError(f"{path.name}: unsupported file type '{suffix or 'no extension'}' (supported: {supported})")


def default_loaders() -> list[DocumentLoader]:
    """Every built-in loader, binary formats first (HWPX before DOCX: both are zip files)."""
    return [PdfLoader(), HwpxLoader(), DocxLoader(), HwpLoader(), HtmlLoader(), MarkdownLoader()]
