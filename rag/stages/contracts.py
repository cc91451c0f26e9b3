"""What the stages hand each other, and what the pipeline needs of each stage.

The types passed between stages (the understood question, the grade, the generation input and its events, the
draft, the verification) and the protocols `AnswerPipeline` calls live here, not in the modules that implement
them: a stage imports the contract, never a sibling stage for its types, and `rag.pipeline` imports no
implementation to name a type.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from rag.lang.asks import QuestionFacets
from rag.models import Citation, Hit, Message, Route, Scope

# --- understanding: enhance → route → plan ---------------------------------------------------------------------


class EnhancedQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # the standalone question (graded and answered)
    original: str
    used_history: bool = False
    # What a follow-up leans on (the earlier question and the reply to it): retrieval searches it at a lower
    # weight than the question's own words. Empty when the question stands alone or an LLM rewrote it.
    context: str = ""


class RouteDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    route: Route
    # greeting | thanks | goodbye | pause | reaction | apology | identity | capability | usage | praise |
    # complaint | test | other | off_topic
    chitchat_kind: str = ""


class Strategy(StrEnum):
    SINGLE = "single"
    MULTI = "multi"


class QueryPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    intent: str
    keywords: tuple[str, ...] = ()
    search_queries: tuple[str, ...]
    sub_questions: tuple[str, ...] = ()  # the parts of a compound question, answered one by one
    strategy: Strategy = Strategy.SINGLE
    answer_style: str = "concise"
    hypothetical_answer: str = ""  # HyDE: a passage written as the answer might read, searched for vague questions


class QueryUnderstanding(BaseModel):
    """What the question means: its standalone form, the route and the search plan."""

    model_config = ConfigDict(frozen=True)

    enhanced: EnhancedQuery
    decision: RouteDecision
    plan: QueryPlan
    lookup_query: str  # the text a lookup resolves (the standalone question when history made it a reference)
    search_if_not_found: bool = True  # a lookup that finds nothing exact is searched instead (unless forced)
    by: Literal["llm", "offline", "pattern", "memo"] = "offline"
    language: str = "ko"  # the asker's language (rag/lang): the reply's framing follows it
    korean_query: str = ""  # en / vi: the glossary's Korean words for the question, what the judge reads
    topics: tuple[str, ...] = ()  # en / vi: the glossary topics the question names, in its language
    topic_words: tuple[tuple[str, ...], ...] = ()  # per topic, its Korean words (what a refusal finds silent)
    # What is asked (rag/lang/asks.py), read once from the question the answer is read against (its Korean words
    # for en / vi), with one reading per part of a compound question; the lead of the answer reads them.
    facets: QuestionFacets = QuestionFacets()


# --- grading and verification ------------------------------------------------------------------------------------


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    score: float  # 0–100
    hedge: bool = False  # not passed, but the closest article is close enough to offer as such (not a refusal)
    missing: tuple[str, ...] = ()  # offline: query words the evidence lacks; LLM: aspects still to find
    relevant: tuple[str, ...] = ()  # chunk ids judged relevant (all, offline)
    looked_for: tuple[str, ...] = ()  # the question's content words, most telling first (for a refusal)
    silent_on: tuple[str, ...] = ()  # … those no top article holds (offline, whichever grader): what a refusal names
    by: Literal["llm", "offline"] = "offline"


class VerificationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # the answer with unsupported sentences removed
    supported: bool  # False when something had to be removed
    removed: tuple[str, ...] = ()
    by: Literal["llm", "offline"] = "offline"


# --- generation -------------------------------------------------------------------------------------------------


class GenerationInput(BaseModel):
    """The question, its parts (compound questions) and the evidence per part, best first."""

    model_config = ConfigDict(frozen=True)

    question: str
    # The question as the user asked it, when `question` was made standalone from the conversation ("그건 며칠
    # 안에 줘야 해?" of "퇴직금은 어떻게 계산해? 그건 …"): the offline lead weighs its own words above the ones it
    # borrowed, or it answers the earlier question again.
    asked: str = ""
    sub_questions: tuple[str, ...] = ()
    evidence: tuple[tuple[Hit, ...], ...]  # one tuple per part (one part for a simple question)
    answer_style: str = "concise"
    scope: Scope | None = None  # the turn's collections: the LLM's tools search only these
    # The asker's language (rag/lang): an English or Vietnamese question is answered from its Korean words
    # (`korean_query`) and framed in its language; the quotes stay Korean.
    language: str = "ko"
    korean_query: str = ""
    topics: tuple[str, ...] = ()  # the glossary topics the question names, in its language
    facets: QuestionFacets | None = None  # what is asked, as the understanding read it (None: the generator reads)


class NumberedSource(BaseModel):
    """A chunk as the prompt numbers it; `parts` are the question parts (0-based) it was retrieved for."""

    model_config = ConfigDict(frozen=True)

    index: int
    hit: Hit
    parts: tuple[int, ...]


class DraftAnswer(BaseModel):
    """A generated answer with its citations; an LLM draft also keeps the numbered sources it was written from,
    so `revise` needs nothing but the draft."""

    model_config = ConfigDict(frozen=True)

    text: str
    citations: tuple[Citation, ...]
    followups: tuple[str, ...] = ()  # proposed by the generator itself (LLM only)
    note: str = ""  # a user-facing line to append: the offline fallback or an interrupted stream
    by: Literal["llm", "extractive"] = "extractive"
    sources: tuple[NumberedSource, ...] = Field(default=(), exclude=True)


class GenerationEvent(BaseModel):
    """One step of generation: answer text to show, a status line (a tool at work), or — always last — the draft."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["delta", "status", "draft"]
    text: str = ""
    draft: DraftAnswer | None = None

    @classmethod
    def delta(cls, text: str) -> GenerationEvent:
        return cls(kind="delta", text=text)

    @classmethod
    def status(cls, text: str) -> GenerationEvent:
        return cls(kind="status", text=text)

    @classmethod
    def done(cls, draft: DraftAnswer) -> GenerationEvent:
        return cls(kind="draft", draft=draft)


# --- the stages the pipeline calls -------------------------------------------------------------------------------


class Understander(Protocol):
    """Enhance, route and plan (one LLM call at most)."""

    async def run(self, question: str, history: tuple[Message, ...], *,
                  forced: Route | None = None) -> QueryUnderstanding: ...


class Grader(Protocol):
    async def run(self, question: str, hits: list[Hit], *, parts: int = 1, asked: str = "") -> GradeResult: ...


class Rewriter(Protocol):
    async def run(self, question: str, missing: tuple[str, ...]) -> str: ...


class Generator(Protocol):
    """`run` streams the answer's events, the last carrying the draft (text + citations); `revise` retries once."""

    def run(self, request: GenerationInput) -> AsyncIterator[GenerationEvent]: ...

    async def revise(self, request: GenerationInput, draft: DraftAnswer,
                     unsupported: tuple[str, ...]) -> DraftAnswer | None: ...


class Verifier(Protocol):
    """`quoted`: the answer quotes the articles (the extractive draft), so the offline judgement is enough."""

    async def run(self, text: str, citations: tuple[Citation, ...], *, quoted: bool = False) -> VerificationResult: ...


class FollowupSuggester(Protocol):
    """`quoted`: the answer quotes the articles (the extractive draft): its follow-ups are suggested offline."""

    async def run(self, question: str, hits: list[Hit], cited_chunk_ids: set[str],
                  proposed: tuple[str, ...] = (), *, quoted: bool = False) -> tuple[str, ...]: ...
