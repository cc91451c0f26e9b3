"""Tolerant text decoding: a file is text when it decodes, whatever characters it holds.

OCR'd or PDF-extracted pages carry replacement characters (`�`), picture markers and Markdown tables; they
are text. Random bytes are not: they fail to decode (or decode into control characters). A file cut in the
middle of its last character (a truncated download, `head -c`) keeps everything before the cut and says so.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from rag.errors import IngestError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Encodings tried in order; CP949 covers older Korean files (EUC-KR is a subset).
_ENCODINGS = ("utf-8", "cp949")
# C0 controls other than whitespace, backspace and ESC do not occur in text; in random bytes about one byte in
# nine is one. Above this share the "text" is binary data that happened to decode.
_MAX_CONTROL_SHARE = 0.01
# A UTF-8 file with a few damaged bytes (a bad sector, a bad copy) is kept with `�` in their place.
_MAX_DAMAGED_SHARE = 0.001
_NOT_TEXT_CONTROLS = frozenset(chr(c) for c in range(32) if chr(c) not in "\t\n\r\f\v\b\x1b")


@dataclass(frozen=True)
class DecodedText:
    """The decoded text, the encoding that read it, and what had to be tolerated (for the ingest report)."""

    text: str
    encoding: str
    warnings: tuple[str, ...] = ()


def _strict(raw: bytes, encoding: str) -> tuple[str, int] | None:
    """(text, bytes left over by a character cut at the end), or None when `raw` is not in `encoding`."""
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        text = decoder.decode(raw, final=False)
    except UnicodeDecodeError:
        return None
    pending, _ = decoder.getstate()
    return text, len(pending)


def control_share(text: str) -> float:
    """Share of characters that are control codes no text file contains."""
    if not text:
        return 0.0
    return sum(1 for ch in text if ch in _NOT_TEXT_CONTROLS) / len(text)


def _decode(raw: bytes) -> tuple[str, str, list[str]] | None:
    if raw.startswith(_UTF16_BOMS):
        return raw.decode("utf-16", errors="replace"), "utf-16", []
    if b"\x00" in raw:
        return None
    body = raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw
    for encoding in _ENCODINGS:
        decoded = _strict(body, encoding)
        if decoded is None:
            continue
        text, cut = decoded
        warnings = [f"the last character was cut off ({cut} byte{'s' if cut > 1 else ''} dropped)"] if cut else []
        return text, encoding, warnings
    text = body.decode("utf-8", errors="replace")
    damaged = text.count("\ufffd") - body.decode("utf-8", errors="ignore").count("\ufffd")
    if damaged <= max(1, len(body) * _MAX_DAMAGED_SHARE):
        return text, "utf-8", [f"{damaged} undecodable byte sequence(s) replaced by �"]
    return None


def decode_text(raw: bytes, name: str) -> DecodedText:
    """UTF-8 (with or without BOM), UTF-16 with BOM, then CP949; IngestError naming `name` when it is not text."""
    decoded = _decode(raw)
    if decoded is None:
        raise IngestError(f"{name}: not text (does not decode as UTF-8, UTF-16 or CP949; binary or damaged)")
    text, encoding, warnings = decoded
    if control_share(text) > _MAX_CONTROL_SHARE:
        raise IngestError(f"{name}: binary content, not text")
    return DecodedText(text=text, encoding=encoding, warnings=tuple(warnings))


def looks_like_text(head: bytes) -> bool:
    """True when the first bytes of a file decode as text (a character cut at the end of the sample is fine)."""
    sample = head[:8192]
    decoded = _decode(sample)
    return decoded is not None and control_share(decoded[0]) <= _MAX_CONTROL_SHARE


__all__ = ["DecodedText", "control_share", "decode_text", "looks_like_text"]
