"""Loaders turn files into LoadedDocument; `LoaderRegistry` picks one by content and extension."""

from rag.knowledge.loaders.base import DocumentLoader, LoadedDocument, PageSpan
from rag.knowledge.loaders.docx import DocxLoader
from rag.knowledge.loaders.html import HtmlLoader
from rag.knowledge.loaders.hwp import HwpLoader
from rag.knowledge.loaders.hwpx import HwpxLoader
from rag.knowledge.loaders.markdown import MarkdownLoader
from rag.knowledge.loaders.pdf import PdfLoader
from rag.knowledge.loaders.registry import LoaderRegistry, default_loaders

__all__ = [
    "DocumentLoader",
    "DocxLoader",
    "HtmlLoader",
    "HwpLoader",
    "HwpxLoader",
    "LoadedDocument",
    "LoaderRegistry",
    "MarkdownLoader",
    "PageSpan",
    "PdfLoader",
    "default_loaders",
]
