"""What a question asks, read once: its facets.

A question asks for a figure, an amount, a limit, a sanction, a purpose, a list, a meaning or a repealed version;
it may ask whether something counts as a defined term ("임금에 해당하는지"), ask in a unit ("며칠" → days), set a
numeric condition ("1년 지나면"), lean on the conversation, and tell a story before its legal core.
`QuestionReader` reads these from the cues of `rag/data/asks.yaml` into one `QuestionFacets`, which the
understanding stage makes and retrieval, the reranker and the answer's lead read.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from rag.lang.cues import Cue, load_table

DEFAULT_ASKS = Path(__file__).resolve().parent.parent / "data" / "asks.yaml"
# Where a long question's sentences end (punctuation or a line break: no language in it).
_SENTENCE_BREAK = re.compile(r"(?<=[.?!。？])\s+|\n+")
_CORE_MIN_CHARS = 8  # a last clause shorter than this ("맞나요?") asks about the clause before it


class AskCue(Cue):
    """A thing a question can ask for."""

    with_history: bool = False  # read the earlier turns a follow-up leans on as well


class UnitCue(Cue):
    """A unit a question asks a figure in ("며칠"), and how a provision states such a figure (`states`)."""

    name: str
    states: Cue


class Asks(BaseModel):
    """The `asks` section: one cue per thing asked."""

    model_config = ConfigDict(frozen=True)

    figure: AskCue
    amount: AskCue
    limit: AskCue
    sanction: AskCue
    purpose: AskCue
    listing: AskCue
    meaning: AskCue
    repealed: AskCue


class HistoryCues(BaseModel):
    """The words that make a question lean on the conversation."""

    model_config = ConfigDict(frozen=True)

    leaning: Cue
    opening: Cue
    condition_only: Cue


class CoreCues(BaseModel):
    """Where a long question's story clause ends and its ask begins."""

    model_config = ConfigDict(frozen=True)

    clause_break: Cue


class AskTable(BaseModel):
    """The cue table (`asks.yaml`)."""

    model_config = ConfigDict(frozen=True)

    asks: Asks
    units: tuple[UnitCue, ...] = ()
    condition: Cue
    classification: Cue
    history: HistoryCues
    core: CoreCues

    @classmethod
    def load(cls, path: Path = DEFAULT_ASKS) -> AskTable:
        """The table at `path`; a bad entry or pattern is a ValueError naming the file, the line and the entry."""
        return load_table(path, cls)


class AskedUnit(BaseModel):
    """A unit asked for, with the pattern of a figure stated in it."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    name: str
    states: str

    @cached_property
    def stated(self) -> re.Pattern[str]:
        return re.compile(self.states)


class QuestionFacets(BaseModel):
    """What a question asks, read once from its words (and, for `repealed`, the turns it leans on)."""

    model_config = ConfigDict(frozen=True)

    figure: bool = False  # a figure, a deadline or a limit
    amount: bool = False  # only a figure answers (며칠/얼마/몇); read from the user's own words
    limit: bool = False
    sanction: bool = False
    purpose: bool = False
    listing: bool = False
    meaning: bool = False
    repealed: bool = False
    units: tuple[AskedUnit, ...] = ()  # the units asked for, in the user's own words
    conditions: frozenset[tuple[str, str, bool]] = frozenset()  # (number, unit, at least?): "1년 지나면"
    classified: tuple[str, ...] = ()  # "does X count as Y?": the Ys ("임금에 해당하는지" → 임금)
    leans_on_history: bool = False  # set by the understanding stage when the conversation was folded in
    core: str = ""  # the legal core of a long question, without its story ("" when the question is its core)
    parts: tuple[QuestionFacets, ...] = ()  # each part of a compound question, read on its own

    @property
    def stated_units(self) -> tuple[re.Pattern[str], ...]:
        """How the figures asked for are written ("몇 주" → a number of weeks)."""
        return tuple(u.stated for u in self.units)


class QuestionReader:
    """Reads a question's facets with the cues of `asks.yaml`."""

    def __init__(self, table: AskTable | None = None) -> None:
        self.table = table or AskTable.load()

    def read(self, question: str, *, context: str = "", asked: str = "") -> QuestionFacets:
        """The facets of `question`; `context` (earlier turns it leans on) counts for cues read with the history,
        `asked` (the user's own words, when `question` borrowed from the conversation) for the amount and units."""
        asks = self.table.asks
        own = asked or question
        with_history = f"{context} {question}" if context else question
        found = {name: getattr(asks, name).search(with_history if getattr(asks, name).with_history else question)
                 for name in Asks.model_fields}
        found["amount"] = asks.amount.search(own)
        units = tuple(AskedUnit(name=u.name, states=u.states.compiled.pattern) for u in self.table.units
                      if u.search(own))
        core = self.core(question)
        return QuestionFacets(**found, units=units, conditions=self.conditions(question),
                              classified=self.classified(question), core=core if core != question.strip() else "")

    def conditions(self, text: str) -> frozenset[tuple[str, str, bool]]:
        """(number, unit, at least?) of each numeric condition the question sets."""
        return frozenset((m.group(1), m.group(2), m.group(3) is not None)
                         for m in self.table.condition.compiled.finditer(text))

    def classified(self, text: str) -> tuple[str, ...]:
        """The terms the question asks whether something counts as, in order ("임금에 해당하는지" → 임금)."""
        return tuple(dict.fromkeys(m.group("term") for m in self.table.classification.compiled.finditer(text)))

    def core(self, text: str) -> str:
        """What a long question asks, without its story: its last sentence, or of a long last sentence its last
        clause(s) (at least `_CORE_MIN_CHARS` long). A short question is its own core."""
        sentences = [s for s in _SENTENCE_BREAK.split(text.strip()) if s.strip()]
        core = sentences[-1] if sentences else text
        if len(sentences) > 1 and len(core.replace(" ", "")) < _CORE_MIN_CHARS:
            core = " ".join(sentences[-2:])
        clauses = self.table.core.clause_break.compiled.split(core)
        if len(clauses) > 1:
            tail = clauses[-1]
            for clause in reversed(clauses[:-1]):
                if len(tail.replace(" ", "")) >= _CORE_MIN_CHARS:
                    break
                tail = f"{clause} {tail}"
            core = tail
        return core.strip() or text
