"""Bot services and stores on a real redis-server; every test gets its own key prefix."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import RedisConnection, StateStores
from tests.fakes.pipeline import ScriptedPipeline


@pytest.fixture
def key_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:10]}:"


@pytest.fixture
async def make_redis(redis_server, key_prefix) -> AsyncIterator[Callable[[], RedisConnection]]:
    """Connections as separate replicas would open them, closed after the test."""
    connections: list[RedisConnection] = []

    def make() -> RedisConnection:
        connection = RedisConnection.from_url(redis_server.url, key_prefix=key_prefix)
        connections.append(connection)
        return connection

    yield make
    for connection in connections:
        await connection.close()


@pytest.fixture
def make_replica(make_redis) -> Callable[..., tuple[BotService, ScriptedPipeline]]:
    """A service as one replica would run it: its own Redis client, pipeline and metrics."""

    def make(**limits: object) -> tuple[BotService, ScriptedPipeline]:
        pipeline = ScriptedPipeline()
        service = BotService(
            pipeline=pipeline,
            store=StateStores.on_redis(make_redis()),
            metrics=Metrics(),
            limits=LimitsConfig.model_validate(limits),
        )
        return service, pipeline

    return make
