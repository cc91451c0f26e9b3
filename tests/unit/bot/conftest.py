"""Fixtures for the bot service tests: a clock that moves only when told, and a scripted pipeline."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.limits import LimitsConfig
from bot.metrics import Metrics
from bot.service import BotService
from bot.state import MemoryStateStore
from tests.fakes.clock import FakeClock
from tests.fakes.pipeline import ScriptedPipeline


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1_700_000_000.0)  # epoch seconds, as time.time reads


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
