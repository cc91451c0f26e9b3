"""What a refusal says and offers: the words the regulations are silent on, the closest regulations by title, whom
to ask, and the articles close enough to offer as buttons (never quoted: none of them answers)."""

from __future__ import annotations

from collections.abc import Sequence

from rag.lang import framing_for
from rag.models import Chunk, Hit
from rag.text import ECHOED_CHARS, shorten


def _nouns(words: Sequence[str]) -> list[str]:
    """The nouns among content words (verb stems end in 다; figures start with a digit): what a refusal names."""
    return [w for w in words if not w.endswith("다") and not w[:1].isdigit()]


def related_chunks(chunks: Sequence[Chunk], looked_for: Sequence[str]) -> list[Chunk]:
    """The chunks a refusal may offer as buttons: those holding at least half of the question's nouns (one of one
    or two), so "사내 카페 운영 시간" offers no 근로시간 article for its one shared word. All when no noun was named."""
    nouns = _nouns(looked_for)
    if not nouns:
        return list(chunks)
    need = (len(nouns) + 1) // 2
    return [c for c in chunks if sum(w in c.title or w in c.text for w in nouns) >= need]


def silent_topics(topics: Sequence[str], topic_words: Sequence[Sequence[str]], silent_on: Sequence[str]) -> list[str]:
    """A foreign question's topics (its glossary topics, in the asker's words) the regulations are silent on: those
    whose Korean words the judge found in no top article."""
    silent = set(silent_on)
    return [topic for topic, words in zip(topics, topic_words, strict=False) if silent & set(words)]


ECHOED_WORD_CHARS = 20  # one word's share: a 1,999-letter "word" would otherwise fill the cap alone


def refusal_message(looked_for: Sequence[str], hits: Sequence[Hit], *, silent_on: Sequence[str] = (), words: int = 3,
                    closest: int = 2, language: str = "ko") -> str:
    """The reply when the regulations are silent: what they are silent on (the content words no top article holds;
    else what was looked for), the closest regulations searched (by title), and whom to ask. It never quotes
    an article: none of them answers. ("'학교'에 대한 내용은 찾지 못했어요" about 고등교육법 would be false.)
    `language` picks the framing (rag/lang/framing.py); the caller passes the words to name in the asker's
    language (a foreign question's glossary topics)."""
    messages = framing_for(language)
    silent = _nouns(silent_on)
    nouns = silent or _nouns(looked_for) or list(looked_for)
    if not nouns:
        return messages.NOT_FOUND
    # The user's words come back capped: a pasted page must not be echoed whole.
    named = shorten(", ".join(f"'{shorten(w, ECHOED_WORD_CHARS)}'" for w in nouns[:words]), ECHOED_CHARS)
    # Every word is in the regulations, yet no article answers: say so rather than "nothing about them".
    lines = [messages.NOT_COVERED.format(looked_for=named) if silent or not hits
             else messages.NOT_ANSWERED.format(looked_for=named)]
    # Regulations by their titles, never a collection's storage name ('law', 'default').
    names = [f"「{doc}」" for doc in dict.fromkeys(h.chunk.doc for h in hits)][:closest]
    if names:
        lines.append(messages.NOT_COVERED_CLOSEST.format(closest=", ".join(names)))
    lines.append(messages.NOT_COVERED_ASK)
    return " ".join(lines)
