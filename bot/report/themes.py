"""Refused questions grouped into themes ("what the rules don't cover"), offline and deterministic.

Only the common nouns of a refused question are stored (see `bot.report.records`), so themes are built from noun sets:
each question joins the theme of its most telling noun — a specific noun (not a generic one such as 시간, 방법)
shared by the most refused questions — and a theme whose noun begins another theme's noun absorbs it (주차 takes
주차장). A theme is labelled by its noun and, when most of its questions share one, a second noun.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from rag.lang.stopwords import GENERIC_NOUNS, STOP_NOUNS
from rag.retrieval.tokenizer import KiwiTokenizer, Tokenizer
from rag.text import normalize_text

MAX_NOUNS = 6
NO_NOUNS_LABEL = "기타"


class TopicNouns:
    """The common nouns of a question (Kiwi NNG, ≥ 2 characters, no stop or proper nouns), sorted and capped."""

    def __init__(self, kiwi: object) -> None:
        self._kiwi = kiwi

    @classmethod
    def for_tokenizer(cls, tokenizer: Tokenizer) -> TopicNouns | None:
        """Nouns through the tokenizer's Kiwi; None (no themes) for a tokenizer without one."""
        return cls(tokenizer.kiwi) if isinstance(tokenizer, KiwiTokenizer) else None

    def nouns(self, text: str) -> tuple[str, ...]:
        tokens = self._kiwi.tokenize(normalize_text(text))  # type: ignore[attr-defined]
        kept = {t.form for t in tokens if t.tag == "NNG" and len(t.form) >= 2 and t.form not in STOP_NOUNS}
        # Sorted, not in question order: a set of topic words, never a readable question.
        return tuple(sorted(kept)[:MAX_NOUNS])


class Theme(BaseModel):
    """A group of refused questions."""

    model_config = ConfigDict(frozen=True)

    label: str
    count: int
    nouns: tuple[str, ...] = ()  # the nouns most of its questions share, most frequent first
    examples: tuple[str, ...] = ()  # question texts, only when the operator keeps them
    unknown: tuple[str, ...] = ()  # its nouns neither the index nor the lexicon knows (`rag.stages.vocabulary`)


def group_refusals(noun_sets: Sequence[Sequence[str]], questions: Sequence[str] = (), *,
                   max_examples: int = 3) -> list[Theme]:
    """Themes of refused questions, largest first; `questions` (same order, may be empty) gives examples."""
    frequency = _family_frequency(noun_sets)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, nouns in enumerate(noun_sets):
        groups[_key_noun(nouns, frequency) if nouns else ""].append(i)
    _absorb_compounds(groups)
    themes: list[Theme] = []
    for key, members in groups.items():
        if not key:
            shared: tuple[str, ...] = ()
            label = NO_NOUNS_LABEL
        else:
            shared = _shared_nouns(key, [noun_sets[i] for i in members])
            label = " · ".join(shared)
        examples = tuple(questions[i] for i in members if i < len(questions) and questions[i])[:max_examples]
        themes.append(Theme(label=label, count=len(members), nouns=shared, examples=examples))
    return sorted(themes, key=lambda t: (-t.count, t.label == NO_NOUNS_LABEL, t.label))


def _family_frequency(noun_sets: Sequence[Sequence[str]]) -> Counter[str]:
    """How many questions hold a noun or a compound that begins with it (주차 counts the 주차장 questions)."""
    vocabulary = {noun for nouns in noun_sets for noun in nouns}
    relatives = {m: {n for n in vocabulary if m.startswith(n)} for m in vocabulary}
    frequency: Counter[str] = Counter()
    for nouns in noun_sets:
        frequency.update({r for n in nouns for r in relatives[n]})
    return frequency


def _key_noun(nouns: Sequence[str], frequency: Counter[str]) -> str:
    # Specific before generic, then the noun most refused questions share, then the longer, then by spelling.
    return min(nouns, key=lambda n: (n in GENERIC_NOUNS, -frequency[n], -len(n), n))


def _absorb_compounds(groups: dict[str, list[int]]) -> None:
    """Merge a theme into a theme whose noun begins its own (주차장 into 주차): Korean compounds start with it."""
    for key in sorted((k for k in groups if k), key=len, reverse=True):
        for shorter in sorted((k for k in groups if k and k != key and len(k) < len(key)), key=len, reverse=True):
            if key.startswith(shorter):
                groups[shorter].extend(groups.pop(key))
                break


def _shared_nouns(key: str, noun_sets: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The key noun, then a second noun when more than half of the theme's questions (two or more) have it."""
    counts = Counter(n for nouns in noun_sets for n in set(nouns) if not (key.startswith(n) or n.startswith(key)))
    if len(noun_sets) >= 2 and counts:
        second, seen = min(counts.items(), key=lambda item: (item[0] in GENERIC_NOUNS, -item[1], item[0]))
        if seen * 2 > len(noun_sets):
            return key, second
    return (key,)


__all__ = ["NO_NOUNS_LABEL", "Theme", "TopicNouns", "group_refusals"]
