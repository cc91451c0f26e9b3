"""Scripted answers for the playground adapter's tests (run through `tests.fakes.turn_service`). Our own sample text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from rag import messages
from rag.models import Answer, AnswerEvent, Chunk, Citation, Hit, Route, Scope, Turn

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


async def endless_status(turn: Turn) -> AsyncIterator[AnswerEvent]:
    """An answer that never ends (status lines forever): only the adapter closing the event stream stops it."""
    while True:
        yield AnswerEvent.status(messages.STATUS_WRITING)
        await asyncio.sleep(0)  # let the server notice a closed connection


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
