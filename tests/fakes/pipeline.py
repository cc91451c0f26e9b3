"""A scripted stand-in for `rag.pipeline.AnswerPipeline`, for the bot service's tests (unit and on Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from rag import messages
from rag.models import Answer, AnswerEvent, Route, Turn


class ScriptedPipeline:
    """Answers `{question} 답변`; a question registered with `hold` pauses mid-answer until its gate opens."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self._gates: dict[str, asyncio.Event] = {}

    def hold(self, question: str) -> asyncio.Event:
        gate = asyncio.Event()
        self._gates[question] = gate
        return gate

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        self.turns.append(turn)
        yield AnswerEvent.status(messages.STATUS_SEARCHING)
        yield AnswerEvent.delta(f"{turn.text} ")
        gate = self._gates.get(turn.text)
        if gate is not None:
            await gate.wait()
        else:
            await asyncio.sleep(0)  # a real answer lets other turns run while it is written
        yield AnswerEvent.delta("답변")
        answer = Answer(
            text=f"{turn.text} 답변",
            route=Route.SEARCH,
            llm_calls=2,
            timings_ms={"retrieve": 40.0, "generate": 900.0},
        )
        yield AnswerEvent.done(answer)


__all__ = ["ScriptedPipeline"]
