"""Typed models shared across the RAG core and handed to adapters.

Everything that crosses a package boundary is one of these frozen pydantic models.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag.lang.reference import (  # noqa: F401 - re-exported: the labels every package writes
    CIRCLED,
    article_label,
    paragraph_label,
    paragraph_marker,
    paragraph_number,
)


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


# --- knowledge ---------------------------------------------------------------


class Chunk(Frozen):
    """One indexed piece of a regulation: an article, a part of a long article, an annex or addenda."""

    chunk_id: str
    doc: str
    article: str = ""  # 제60조, 제43조의2, 별표 2, 부칙, or "" for unstructured text
    title: str = ""  # the article title, e.g. 연차 유급휴가
    text: str  # the text as indexed (the article header repeated in each part)
    chapter: str = ""  # 제4장, where the chunk has one
    chapter_path: tuple[str, ...] = ()  # ("제4장 근로시간과 휴식", "제1절 …")
    paragraphs: tuple[str, ...] = ()  # 항 markers covered, e.g. ("①", "②")
    part: int = 0  # index of this part within a split article
    kind: Literal["article", "annex", "addenda", "text", "form"] = "article"
    deleted: bool = False  # a 삭제 article
    page: int | None = None
    effective_date: str = ""
    rule_code: str = ""  # the regulation's number, 3-1-24 (front matter 규정번호 or the title)
    status: str = ""  # 시행, 폐지 …
    audience: str = ""
    domain: str = ""
    collection: str = "default"
    source_url: str = ""
    source_path: str = ""
    content_hash: str = ""

    @property
    def label(self) -> str:
        """Human-readable citation label: `근로기준법 제60조`."""
        return f"{self.doc} {self.article}".strip()


class Hit(Frozen):
    """A retrieved chunk with the fused score and how each retriever ranked it."""

    chunk: Chunk
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)


# --- conversation ------------------------------------------------------------


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class Message(Frozen):
    role: Role
    content: str


class Scope(Frozen):
    """What a turn may search: collections and audience."""

    collections: tuple[str, ...] = ()  # empty: every collection
    audience: str = ""


class Turn(Frozen):
    """A platform-neutral question with its conversation history (oldest first)."""

    turn_id: str
    text: str
    user: str = ""
    conversation_key: str = ""
    history: tuple[Message, ...] = ()
    scope: Scope = Scope()
    force_route: Route | None = None  # a slash command may force a lookup


# --- answers -----------------------------------------------------------------


class Route(StrEnum):
    CHITCHAT = "chitchat"
    LOOKUP = "lookup"
    SEARCH = "search"


class Outcome(StrEnum):
    """How a turn ended (DESIGN.md §3 "Outcomes"): only `refused` is a refusal."""

    ANSWERED = "answered"
    HEDGED = "hedged"  # the closest article quoted, with words that it may not settle the case and whom to ask
    REFUSED = "refused"  # nothing close: no article quoted
    SMALL_TALK = "small_talk"
    LOOKUP = "lookup"


class Citation(Frozen):
    """A source the answer relies on; `index` is the inline marker number ([1])."""

    index: int
    doc: str
    article: str = ""
    paragraph: str = ""  # ①, or "" for the whole article
    title: str = ""
    quote: str = ""
    url: str = ""
    chunk_id: str = ""
    chapter: str = ""

    @property
    def label(self) -> str:
        """`근로기준법 제60조 제1항`."""
        label = f"{self.doc} {self.article}".strip()
        if self.paragraph:
            label += f" {paragraph_label(self.paragraph)}"
        return label


class Answer(Frozen):
    """The final answer of one turn."""

    text: str
    route: Route
    citations: tuple[Citation, ...] = ()
    followups: tuple[str, ...] = ()
    grounded: bool = True  # False: the regulations do not cover the question
    outcome: Outcome = Outcome.ANSWERED
    llm_calls: int = 0
    llm_tokens: dict[str, tuple[int, int]] = Field(default_factory=dict)  # stage -> (input, output) tokens
    llm_breaker: str = ""  # the LLM circuit breaker after this turn (closed, half_open, open); "" offline
    timings_ms: dict[str, float] = Field(default_factory=dict)
    retrieved: tuple[Hit, ...] = ()  # ranked evidence, for eval and debugging
    notes: tuple[str, ...] = ()  # flow log lines (regbot ask --debug)
    cache: Literal["off", "miss", "hit"] = "off"  # the semantic answer cache's part in this answer
    # The asker's language as the understanding decided it (a tapped reference takes the conversation's): the
    # captions and buttons follow it. "": no understanding ran, an adapter reads the question's own letters.
    language: str = ""

    @model_validator(mode="before")
    @classmethod
    def _outcome_from_grounding(cls, data: Any) -> Any:
        """An answer built without an outcome ends as its route and grounding say (a hedge is always explicit)."""
        if isinstance(data, dict) and data.get("outcome") is None:
            route, grounded = data.get("route"), data.get("grounded", True)
            data = {**data, "outcome": Outcome.REFUSED if not grounded else Outcome.SMALL_TALK
                    if route == Route.CHITCHAT else Outcome.LOOKUP if route == Route.LOOKUP else Outcome.ANSWERED}
        return data


class AnswerEventKind(StrEnum):
    STATUS = "status"
    DELTA = "delta"
    SOURCES = "sources"
    FOLLOWUPS = "followups"
    DONE = "done"
    ERROR = "error"


class AnswerEvent(Frozen):
    """One step of a streamed answer. Exactly one of the payload fields is set per kind."""

    kind: AnswerEventKind
    text: str = ""  # status line, delta text or error message
    citations: tuple[Citation, ...] = ()
    followups: tuple[str, ...] = ()
    answer: Answer | None = None

    @classmethod
    def status(cls, text: str) -> AnswerEvent:
        return cls(kind=AnswerEventKind.STATUS, text=text)

    @classmethod
    def delta(cls, text: str) -> AnswerEvent:
        return cls(kind=AnswerEventKind.DELTA, text=text)

    @classmethod
    def sources(cls, citations: tuple[Citation, ...]) -> AnswerEvent:
        return cls(kind=AnswerEventKind.SOURCES, citations=citations)

    @classmethod
    def followup_questions(cls, followups: tuple[str, ...]) -> AnswerEvent:
        return cls(kind=AnswerEventKind.FOLLOWUPS, followups=followups)

    @classmethod
    def done(cls, answer: Answer) -> AnswerEvent:
        return cls(kind=AnswerEventKind.DONE, answer=answer)

    @classmethod
    def error(cls, text: str) -> AnswerEvent:
        return cls(kind=AnswerEventKind.ERROR, text=text)


# Citation markers ("[3]" in an answer); 항 markers (① … ⑳) and labels are the reference grammar's (rag.lang.reference).
CITATION_MARKER = re.compile(r"\[(\d+)\]")


def cited_indices(text: str) -> set[int]:
    """The source numbers an answer's text cites: "… 15일이에요 [1][3]." → {1, 3}."""
    return {int(n) for n in CITATION_MARKER.findall(text)}


Turn.model_rebuild()


_PARAGRAPH_START = re.compile(rf"^([{CIRCLED}])")


def split_paragraphs(chunk_text: str) -> list[tuple[str, str]]:
    """(marker, text) for each 항 of a chunk's body; the header line is dropped."""
    lines = chunk_text.split("\n")[1:]
    out: list[tuple[str, str]] = []
    for line in lines:
        match = _PARAGRAPH_START.match(line)
        if match or not out:
            out.append((match.group(1) if match else "", line))
        else:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return [(m, t.strip()) for m, t in out if t.strip()]


def cite_chunk(chunk: Chunk, *, index: int, paragraph: str = "", quote: str = "") -> Citation:
    """Source [index]: `chunk`, or one 항 of it when `paragraph` names it."""
    return Citation(index=index, doc=chunk.doc, article=chunk.article, paragraph=paragraph, title=chunk.title,
                    quote=quote, url=chunk.source_url, chunk_id=chunk.chunk_id, chapter=chunk.chapter)
