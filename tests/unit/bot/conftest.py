"""Fixtures for the bot service tests: a clock that moves only when told (or when the service sleeps)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import StateStores
from tests.fakes.clock import AdvancingSleeps, FakeClock
from tests.fakes.pipeline import ScriptedPipeline


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1_700_000_000.0)  # epoch seconds, as time.time reads


@pytest.fixture
def pipeline() -> ScriptedPipeline:
    return ScriptedPipeline()


@pytest.fixture
def store(clock: FakeClock) -> StateStores:
    return StateStores.in_process(clock=clock)


@pytest.fixture
def sleeps(clock: FakeClock) -> AdvancingSleeps:
    return AdvancingSleeps(clock)


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
def make_service(
    pipeline: ScriptedPipeline, store: StateStores, metrics: Metrics, clock: FakeClock, sleeps: AdvancingSleeps
) -> Callable[..., BotService]:
    def make(**limits: object) -> BotService:
        return BotService(
            pipeline=pipeline,
            store=store,
            metrics=metrics,
            limits=LimitsConfig.model_validate(limits),
            clock=clock,
            sleep=sleeps,
        )

    return make
