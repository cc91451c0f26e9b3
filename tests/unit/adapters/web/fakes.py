"""An in-memory TurnService for the playground adapter, with scripted answers. Sample text is our own writing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from adapters.base import Feedback, ScopeRequest
from rag import messages
from rag.models import Answer, AnswerEvent, Chunk, Citation, Hit, Message, Route, Scope, Turn

LEAVE_CITATION = Citation(
    index=1,
    doc="취업규칙",
    article="제20조",
    paragraph="①",
    title="연차휴가",
    quote="① 1년 동안 8할 넘게 출근한 직원은 15일의 유급 연차휴가를 받는다.",
    url="https://intranet.example.com/rules/work#20",
)
LEAVE_ANSWER = "**1년 근속**하면 연차휴가는 15일이에요 [1].\n\n- 2년마다 하루씩 늘어요 [1]"
LEAVE_FOLLOWUPS = ("남은 연차는 어떻게 확인해?", "연차를 반차로 나눠 쓸 수 있어?")
PLAYGROUND_SCOPE = Scope(collections=("default",), audience="playground")

Script = Callable[[Turn], list[AnswerEvent]]


def make_chunk(*, doc: str = "취업규칙", article: str = "제20조", title: str = "연차휴가", text: str = "",
               part: int = 0, url: str = "https://intranet.example.com/rules/work") -> Chunk:
    header = f"{doc} {article}({title})"
    return Chunk(chunk_id=f"{doc}-{article}-{part}", doc=doc, article=article, title=title,
                 text=f"{header}\n{text}", part=part, chapter="제4장",
                 chapter_path=("제4장 휴일과 휴가",), source_url=url)


def leave_answer_events(turn: Turn) -> list[AnswerEvent]:
    """A search answer citing 취업규칙 제20조, with the evidence a pipeline would attach."""
    answer = Answer(
        text=LEAVE_ANSWER,
        route=Route.SEARCH,
        citations=(LEAVE_CITATION,),
        followups=LEAVE_FOLLOWUPS,
        llm_calls=2,
        timings_ms={"total": 812.0},
        retrieved=(Hit(chunk=make_chunk(text="① 내부 평가용 본문"), score=0.9),),
        notes=("route: search",),
    )
    return [
        AnswerEvent.status(messages.STATUS_SEARCHING),
        AnswerEvent.delta(LEAVE_ANSWER[:12]),
        AnswerEvent.delta(LEAVE_ANSWER[12:]),
        AnswerEvent.sources((LEAVE_CITATION,)),
        AnswerEvent.followup_questions(LEAVE_FOLLOWUPS),
        AnswerEvent.done(answer),
    ]


class FakeTurnService:
    """Implements `adapters.base.TurnService` in memory; records turns, scope requests and feedback.

    With `endless=True` an answer never ends (status lines forever), so only the adapter closing the event stream
    stops it; `closed` is set when that happens.
    """

    def __init__(self, script: Script = leave_answer_events, *, endless: bool = False) -> None:
        self.script = script
        self.endless = endless
        self.closed = asyncio.Event()
        self.turns: list[Turn] = []
        self.scope_requests: list[ScopeRequest] = []
        self.feedback: list[Feedback] = []
        self.histories: dict[str, list[Message]] = {}
        self._claimed: set[str] = set()

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
        if key in self._claimed:
            return False
        self._claimed.add(key)
        return True

    async def has_history(self, conversation_key: str) -> bool:
        return conversation_key in self.histories

    async def history(self, conversation_key: str) -> list[Message]:
        return list(self.histories.get(conversation_key, []))

    async def scope_for(self, request: ScopeRequest) -> Scope:
        self.scope_requests.append(request)
        return PLAYGROUND_SCOPE

    async def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        self.turns.append(turn)
        try:
            if self.endless:
                while True:
                    yield AnswerEvent.status(messages.STATUS_WRITING)
                    await asyncio.sleep(0)  # let the server notice a closed connection
            for event in self.script(turn):
                yield event
        finally:
            self.closed.set()

    async def record_feedback(self, feedback: Feedback) -> None:
        self.feedback.append(feedback)


def parse_sse(body: str) -> list[tuple[str, dict]]:
    """(event name, JSON data) of each Server-Sent Events frame, checking every frame has both lines."""
    import json

    frames = []
    for frame in body.split("\n\n"):
        if not frame:
            continue
        lines = frame.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: "), frame
        frames.append((lines[0].removeprefix("event: "), json.loads(lines[1].removeprefix("data: "))))
    return frames
