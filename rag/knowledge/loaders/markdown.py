"""Markdown and plain-text loader, with YAML front matter."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.decoding import decode_text, looks_like_text
from rag.text import normalize_text

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def split_front_matter(text: str) -> tuple[dict, str]:
    """YAML front matter (a dict, {} when absent or unreadable) and the body."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(data, dict):
        return {}, text
    return data, text[match.end() :]


class MarkdownLoader:
    """Loads `.md`/`.markdown`/`.txt`: front matter into metadata, body as text."""

    format = "md"
    extensions = (".md", ".markdown", ".txt", ".text")

    def sniff(self, head: bytes) -> bool:
        return looks_like_text(head)

    def load(self, path: Path) -> LoadedDocument:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise IngestError(f"{path.name}: cannot be read ({exc.strerror})") from exc
        decoded = decode_text(raw, path.name)
        text = normalize_text(decoded.text)
        if not text.strip():
            raise IngestError(f"{path.name}: empty file")
        front, body = split_front_matter(text)
        title = str(front.get("제목") or front.get("title") or "").strip()
        if not title:
            heading = re.search(r"^#\s+(.+)$", body, re.M)
            title = heading.group(1).strip() if heading else ""
        fmt = "txt" if path.suffix.lower() in (".txt", ".text") else "md"
        return LoadedDocument(
            path=str(path),
            format=fmt,
            text=body,
            title=title,
            front_matter=front,
            markdown_headings=bool(re.search(r"^#{1,6}\s", body, re.M)),
            warnings=decoded.warnings,
        )
