"""Loaders turn files into LoadedDocument; `LoaderRegistry` picks one by content and extension."""

from rag.knowledge.loaders.base import DocumentLoader, LoadedDocument, PageSpan
from rag.knowledge.loaders.markdown import MarkdownLoader
from rag.knowledge.loaders.registry import LoaderRegistry

__all__ = ["DocumentLoader", "LoadedDocument", "LoaderRegistry", "MarkdownLoader", "PageSpan"]
