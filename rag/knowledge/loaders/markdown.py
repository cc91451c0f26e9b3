"""Markdown and plain-text loader, with YAML front matter."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import yaml

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.text import normalize_text

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Share of control or undecodable characters above which "text" is really binary data.
_MAX_GARBAGE_SHARE = 0.02


def garbage_share(text: str) -> float:
    """Share of characters that no text file contains: C0/C1 controls (not tab, newlines, form feed, ESC)
    and the replacement character a failed decode leaves."""
    if not text:
        return 0.0
    bad = sum(1 for ch in text
              if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\x1b") or 0x7F <= ord(ch) < 0xA0)
    return bad / len(text)


def looks_like_text(head: bytes) -> bool:
    """True when the first bytes read as UTF-8, UTF-16 (with BOM) or CP949 text, not binary data."""
    if head.startswith(_UTF16_BOMS):
        return True
    if b"\x00" in head[:8192]:
        return False
    sample = head[:8192]
    for encoding in ("utf-8", "cp949"):
        text = sample.decode(encoding, errors="replace")
        # A multi-byte character cut off at the end of the sample is not evidence of binary data.
        if len(sample) == 8192:
            text = text[:-2]
        if garbage_share(text) <= _MAX_GARBAGE_SHARE:
            return True
    return False


def decode_text(raw: bytes, path: Path) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, then CP949 (older Korean files); binary is refused."""
    if raw.startswith(_UTF16_BOMS):
        text = raw.decode("utf-16", errors="replace")
    elif b"\x00" in raw[:8192]:
        raise IngestError(f"{path.name}: binary content, not text")
    else:
        for encoding in ("utf-8-sig", "cp949"):
            try:
                text = raw.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
        else:
            raise IngestError(f"{path.name}: not valid UTF-8 or CP949 text (binary, or another encoding)")
    if garbage_share(text) > _MAX_GARBAGE_SHARE:
        raise IngestError(f"{path.name}: binary content, not text")
    return text


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
        text = normalize_text(decode_text(raw, path))
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
        )
