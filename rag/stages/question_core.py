"""A question's legal core, told from its story.

Real questions tell the situation first and ask last ("당 기관은 … 공공기관으로서 … 달리하는 것이 차별인지",
"퇴사 후 한 달이 지났는데 … 어떻게 해야 하나요?"). The articles must answer the asked thing, not hold every word
of the story, so the answerability judge measures coverage on the core and lets the story add evidence only.

The cues (where sentences break, which sentence asks, where a story clause ends) and the filler words are data:
`rag/data/question_core.yaml`, each entry with the examples and counter-examples its test runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cached_property
from itertools import pairwise
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rag.lang.cues import Cue, load_table
from rag.text import collapse_spaces, normalize_text

DEFAULT_CUES = Path(__file__).resolve().parent.parent / "data" / "question_core.yaml"
_SENTENCE_END = re.compile(r"(?<=[.?!。])\s+|\n+")


class Filler(BaseModel):
    """A noun of a chatty question that names the conversation, never the topic."""

    model_config = ConfigDict(frozen=True)

    word: str
    examples: tuple[str, ...] = Field(min_length=1)
    counter_examples: tuple[str, ...] = ()  # "question → topic": the topic stays looked for


class QuestionCues(BaseModel):
    """The cue table (`question_core.yaml`)."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    min_core_topics: int = Field(2, ge=1)
    sentence_breaks: tuple[Cue, ...] = ()
    asks: tuple[Cue, ...] = ()
    situation_ends: tuple[Cue, ...] = ()
    fillers: tuple[Filler, ...] = ()

    @classmethod
    def load(cls, path: Path = DEFAULT_CUES) -> QuestionCues:
        """The table at `path`; a bad entry or pattern is a ValueError naming the file, the line and the entry."""
        return load_table(path, cls)

    @classmethod
    def load_all(cls, paths: Sequence[Path]) -> QuestionCues:
        """The first table (the package's) extended by the entries of the others (a deployment's); each file is
        checked as `load` checks it."""
        first, *rest = [cls.load(path) for path in paths]
        sections = ("sentence_breaks", "asks", "situation_ends", "fillers")
        return cls(min_core_topics=first.min_core_topics,
                   **{s: getattr(first, s) + tuple(e for t in rest for e in getattr(t, s)) for s in sections})

    @cached_property
    def filler_words(self) -> frozenset[str]:
        return frozenset(f.word for f in self.fillers)


class QuestionParts(BaseModel):
    """The question cut into clauses, in order, and which of them ask."""

    model_config = ConfigDict(frozen=True)

    clauses: tuple[str, ...]
    asking: tuple[int, ...]  # indices of the asking clauses (the last clause of each asking sentence)
    order: tuple[int, ...]  # every clause index, in the order the core grows: asking first, then nearest before

    def cores(self) -> Iterator[tuple[frozenset[int], str, str]]:
        """(clause indices, core, story) from the narrowest core (the asking clauses) to the whole question."""
        for size in range(1, len(self.order) + 1):
            taken = frozenset(self.order[:size]) | frozenset(self.asking)
            core = " ".join(c for i, c in enumerate(self.clauses) if i in taken)
            story = " ".join(c for i, c in enumerate(self.clauses) if i not in taken)
            yield taken, core, story
            if not story:
                return


def split_question(question: str, cues: QuestionCues) -> QuestionParts:
    """Sentences (punctuation, line breaks, the table's breaks) cut into clauses at story-clause ends."""
    text = normalize_text(question).strip()
    sentences = [s for s in (collapse_spaces(p).strip() for p in _sentences(text, cues)) if s]
    if not sentences:
        return QuestionParts(clauses=(text,), asking=(0,), order=(0,))
    strong = [i for i, s in enumerate(sentences) if any(c.compiled.search(s) for c in cues.asks if not c.weak)]
    weak = [i for i, s in enumerate(sentences) if any(c.compiled.search(s) for c in cues.asks if c.weak)]
    asking_sentences = strong or weak[-1:] or [len(sentences) - 1]
    clauses: list[str] = []
    sentence_of: list[int] = []
    for number, sentence in enumerate(sentences):
        for clause in _clauses(sentence, cues):
            clauses.append(clause)
            sentence_of.append(number)
    asking = tuple(max(i for i, s in enumerate(sentence_of) if s == n) for n in asking_sentences)
    last = max(asking)
    # The core grows back from the asking clause, then forward past it (a story told after the question).
    before = [i for i in range(last, -1, -1) if i not in asking]
    after = [i for i in range(last + 1, len(clauses)) if i not in asking]
    return QuestionParts(clauses=tuple(clauses), asking=asking, order=(*asking, *before, *after))


def _sentences(text: str, cues: QuestionCues) -> list[str]:
    parts = _SENTENCE_END.split(text)
    for cue in cues.sentence_breaks:
        parts = [piece for part in parts for piece in _split_before(part, cue.compiled)]
    return parts


def _split_before(text: str, pattern: re.Pattern[str]) -> list[str]:
    starts = [m.start() for m in pattern.finditer(text) if m.start() > 0]
    bounds = [0, *starts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


def _clauses(sentence: str, cues: QuestionCues) -> list[str]:
    ends = sorted({m.end() for cue in cues.situation_ends for m in cue.compiled.finditer(sentence)})
    bounds = [0, *(e for e in ends if 0 < e < len(sentence)), len(sentence)]
    return [c for c in (sentence[a:b].strip(" ,") for a, b in pairwise(bounds)) if c]
