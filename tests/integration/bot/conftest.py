"""Bot services and stores on a real redis-server; every test gets its own key prefix."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from bot.limits import LimitsConfig
from bot.metrics import Metrics
from bot.service import BotService
from bot.state import RedisStateStore
from tests.fakes.pipeline import ScriptedPipeline


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
def make_replica(make_redis_store) -> Callable[..., tuple[BotService, ScriptedPipeline]]:
    """A service as one replica would run it: its own Redis client, pipeline and metrics."""

    def make(**limits: object) -> tuple[BotService, ScriptedPipeline]:
        pipeline = ScriptedPipeline()
        service = BotService(
            pipeline=pipeline,
            store=make_redis_store(),
            metrics=Metrics(),
            limits=LimitsConfig.model_validate(limits),
        )
        return service, pipeline

    return make
