"""Chooses the loader for a file: content sniffing first, the extension second."""

from __future__ import annotations

from pathlib import Path

from rag.errors import IngestError
from rag.knowledge.loaders.base import DocumentLoader, LoadedDocument
from rag.knowledge.loaders.markdown import MarkdownLoader


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
        try:
            with path.open("rb") as handle:
                head = handle.read(8192)
        except OSError as exc:
            raise IngestError(f"{path.name}: cannot be read ({exc.strerror})") from exc
        if not head:
            raise IngestError(f"{path.name}: empty file")
        by_extension = [lo for lo in self.loaders if path.suffix.lower() in lo.extensions]
        # A file whose bytes say another format (a PDF named .md) is read as what it is.
        for loader in self.loaders:
            if loader.format != "md" and loader.sniff(head) and loader not in by_extension:
                return loader.load(path)
        for loader in by_extension:
            if loader.sniff(head):
                return loader.load(path)
        raise IngestError(f"{path.name}: content does not match its extension, or the format is unsupported")


def default_loaders() -> list[DocumentLoader]:
    """Every built-in loader, binary formats first."""
    return [MarkdownLoader()]
