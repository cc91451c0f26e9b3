"""Bot services and stores on a real redis-server; every test gets its own key prefix."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from bot.limits import LimitsConfig
from bot.metrics import Metrics
from bot.service import BotService
from bot.state import RedisStateStore
from rag.models import Answer, AnswerEvent, Route, Turn


class GatedPipeline:
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
        yield AnswerEvent.delta(f"{turn.text} ")
        gate = self._gates.get(turn.text)
        if gate is not None:
            await gate.wait()
        yield AnswerEvent.delta("답변")
        yield AnswerEvent.done(Answer(text=f"{turn.text} 답변", route=Route.SEARCH, llm_calls=1))


@pytest.fixture
def key_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:10]}:"


@pytest.fixture
async def make_redis_store(redis_server, key_prefix) -> AsyncIterator[Callable[..., RedisStateStore]]:
    stores: list[RedisStateStore] = []

    def make(**options: object) -> RedisStateStore:
        store = RedisStateStore.from_url(redis_server.url, key_prefix=key_prefix, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.close()


@pytest.fixture
def make_replica(make_redis_store) -> Callable[..., tuple[BotService, GatedPipeline]]:
    """A service as one replica would run it: its own Redis client, pipeline and metrics."""

    def make(**limits: object) -> tuple[BotService, GatedPipeline]:
        pipeline = GatedPipeline()
        service = BotService(
            pipeline=pipeline,
            store=make_redis_store(),
            metrics=Metrics(),
            limits=LimitsConfig.model_validate(limits),
        )
        return service, pipeline

    return make
