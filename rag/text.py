"""Text normalisation shared by ingest and query paths."""

from __future__ import annotations

import html
import re
import unicodedata

from rag import messages
from rag.lang.detect import detect_language
from rag.lang.framing import framing_for
from rag.lang.reference import RULE_CODE, RULE_CODE_SUFFIX
from rag.lang.script import NAME_MARKS

_SPACE = re.compile(r"\s+")
# Zero-width characters and BOMs that arrive from copy-paste and break matching.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


def normalize_text(text: str) -> str:
    """NFC (macOS sends NFD Hangul), invisible characters removed, whitespace kept."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFC", text or ""))


def collapse_spaces(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


ECHOED_CHARS = 60  # the most of the user's own words a reply repeats ("'…'에 해당하는 조문을 찾지 못했어요")


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, "…" marking the cut: what a reply echoes of the user's words."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def doc_key(name: str) -> str:
    """Comparison key for document names: NFC, no spaces, underscores, middle dots or 「」."""
    name = normalize_text(name)
    return NAME_MARKS.sub("", name)




def split_rule_code(text: str) -> tuple[str, str]:
    """(code, rest) when `text` starts with a rule code ("제3-1-24호 제5조" → ("3-1-24", " 제5조")), else ("", text)."""
    match = RULE_CODE.match(normalize_text(text))
    if not match:
        return "", text
    return re.sub(r"\s+", "", match.group(1)), normalize_text(text)[match.end():]


def title_rule_code(title: str) -> tuple[str, str]:
    """(code, name) for a title that carries its number ("3-1-24 여비규정", "여비 규정(제3-1-24호)")."""
    code, rest = split_rule_code(title)
    if code and rest.strip():
        return code, rest.strip()
    match = RULE_CODE_SUFFIX.search(title)
    if match and title[: match.start()].strip():
        return match.group(1), title[: match.start()].strip()
    return "", title


def comparable_text(text: str) -> str:
    """NFC, lower case, letters and digits only: "입사 1년 지나면?" ≡ "입사1년 지나면"."""
    return "".join(ch for ch in normalize_text(text).lower() if ch.isalnum())


def has_hangul_or_alnum(text: str) -> bool:
    """False for emoji-only or punctuation-only input."""
    return any(ch.isalnum() for ch in text)


def question_problem(text: str, *, max_chars: int) -> str:
    """What to tell someone whose text cannot be a question (empty, too long, only emoji); "" when it can.

    Every surface (Slack, Teams, playground, CLI) applies it with REGBOT_MAX_QUESTION_CHARS.
    """
    if not text.strip():
        return messages.EMPTY_QUESTION
    said = framing_for(detect_language(text))  # in the asker's language (rag/lang)
    if len(text) > max_chars:
        return said.TOO_LONG_QUESTION.format(length=len(text), limit=max_chars)
    if not has_hangul_or_alnum(text):
        return said.NO_TEXT_QUESTION
    return ""


# HTML/XML tags left in converted sources (law.go.kr Markdown carries <img …> … </img> around its tables). Only
# ASCII tag names: Korean angle-bracket notes such as <개정 2020. 1. 1.> are content and stay.
_MARKUP_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")


def strip_markup(text: str) -> str:
    """Markup remnants out of source text: tags removed, entities (&amp;, &lt;, &#39;) decoded, and the lines
    that held only markup dropped. Tags go before entities are decoded, so an escaped "&lt;b&gt;" stays text."""
    if "<" not in text and "&" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        cleaned = html.unescape(_MARKUP_TAG.sub("", line))
        if cleaned.strip() or not line.strip():  # a line that held only markup goes; a blank line stays
            lines.append(cleaned.rstrip() if cleaned != line else line)
    return "\n".join(lines)
