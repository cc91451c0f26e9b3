"""Fakes for the bot service tests: a clock that moves only when told, and a scripted pipeline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from bot.limits import LimitsConfig
from bot.metrics import Metrics
from bot.service import BotService
from bot.state import MemoryStateStore
from rag import messages
from rag.models import Answer, AnswerEvent, Route, Turn


class FakeClock:
    """Seconds that only move when a test calls `advance`."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


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
        yield AnswerEvent.delta("답변")
        answer = Answer(
            text=f"{turn.text} 답변",
            route=Route.SEARCH,
            llm_calls=2,
            timings_ms={"retrieve": 40.0, "generate": 900.0},
        )
        yield AnswerEvent.done(answer)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def pipeline() -> ScriptedPipeline:
    return ScriptedPipeline()


@pytest.fixture
def store(clock: FakeClock) -> MemoryStateStore:
    return MemoryStateStore(clock=clock)


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
def make_service(
    pipeline: ScriptedPipeline, store: MemoryStateStore, metrics: Metrics, clock: FakeClock
) -> Callable[..., BotService]:
    def make(**limits: object) -> BotService:
        return BotService(
            pipeline=pipeline,
            store=store,
            metrics=metrics,
            limits=LimitsConfig.model_validate(limits),
            clock=clock,
        )

    return make
