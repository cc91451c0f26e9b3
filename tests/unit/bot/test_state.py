from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pytest

from bot.metrics import Metrics
from bot.state import FailoverStateStore, MemoryStateStore, StateUnavailable
from rag.models import Message, Role


def user(text: str) -> Message:
    return Message(role=Role.USER, content=text)


class SwitchablePrimary:
    """A store that raises StateUnavailable while `down`, as RedisStateStore does when Redis is gone."""

    def __init__(self, store: MemoryStateStore) -> None:
        self.store = store
        self.down = False
        self.calls = 0

    def __getattr__(self, name: str) -> Callable[..., Awaitable[object]]:
        operation = getattr(self.store, name)

        async def call(*args: object, **kwargs: object) -> object:
            self.calls += 1
            if self.down:
                raise StateUnavailable("Redis is unavailable: ConnectionError: refused")
            return await operation(*args, **kwargs)

        return call


class TestMemoryStateStore:
    async def test_history_keeps_only_the_newest_messages(self, clock):
        store = MemoryStateStore(history_max_messages=3, clock=clock)
        await store.append_history("k", [user("하나"), user("둘")])
        await store.append_history("k", [user("셋"), user("넷")])
        assert [m.content for m in await store.load_history("k")] == ["둘", "셋", "넷"]

    async def test_history_expires_after_its_ttl(self, clock):
        store = MemoryStateStore(history_ttl_s=100, clock=clock)
        await store.append_history("k", [user("연차 질문")])
        clock.advance(101)
        assert await store.has_history("k") is False

    async def test_lock_is_released_only_by_its_token(self, store):
        assert await store.try_lock("k", "a", 30)
        assert await store.try_lock("k", "b", 30) is False
        assert await store.release_lock("k", "b") is False
        assert await store.release_lock("k", "a") is True
        assert await store.try_lock("k", "b", 30)

    async def test_refreshed_lock_outlives_its_first_ttl(self, store, clock):
        await store.try_lock("k", "a", 30)
        clock.advance(20)
        assert await store.refresh_lock("k", "a", 30)
        clock.advance(20)
        assert await store.try_lock("k", "b", 30) is False
        clock.advance(11)
        assert await store.refresh_lock("k", "a", 30) is False
        assert await store.try_lock("k", "b", 30)

    async def test_token_bucket_refills_with_time(self, store):
        take = store.take_token
        assert [await take("u", capacity=2, refill_per_s=0.5, now=0.0) for _ in range(3)] == [0.0, 0.0, 2.0]
        assert await take("u", capacity=2, refill_per_s=0.5, now=1.0) == pytest.approx(1.0)
        assert await take("u", capacity=2, refill_per_s=0.5, now=2.0) == 0.0

    async def test_cache_returns_copies_and_expires(self, store, clock):
        value = {"answer": "15일", "citations": ["제60조"]}
        await store.cache_set("q1", value, ttl_s=10)
        value["answer"] = "changed"
        assert await store.cache_get("q1") == {"answer": "15일", "citations": ["제60조"]}
        clock.advance(11)
        assert await store.cache_get("q1") is None

    async def test_generation_counts_up_from_zero(self, store):
        assert await store.generation("semantic") == 0
        assert await store.bump_generation("semantic") == 1
        assert await store.generation("semantic") == 1

    async def test_feedback_keeps_the_newest_records(self, clock):
        store = MemoryStateStore(feedback_max_records=2, clock=clock)
        for n in range(3):
            await store.append_feedback(f'{{"n": {n}}}')
        assert await store.recent_feedback() == ['{"n": 1}', '{"n": 2}']


class TestFailoverStateStore:
    @pytest.fixture
    def primary(self, clock) -> SwitchablePrimary:
        return SwitchablePrimary(MemoryStateStore(clock=clock))

    @pytest.fixture
    def failover(self, primary, clock, metrics) -> FailoverStateStore:
        return FailoverStateStore(
            primary, MemoryStateStore(clock=clock), metrics=metrics, probe_interval_s=3, clock=clock
        )

    async def test_outage_switches_to_memory_with_a_warning_and_a_metric(
        self, primary, failover, metrics: Metrics, caplog
    ):
        primary.down = True
        with caplog.at_level(logging.WARNING, logger="bot.state"):
            assert await failover.claim("Ev1", 60) is True
        assert failover.degraded
        assert "degraded to in-process memory" in caplog.text
        assert metrics.value("regbot_state_degraded") == 1
        assert metrics.value("regbot_state_failovers_total") == 1
        await failover.append_history("k", [user("장애 중 질문")])
        assert [m.content for m in await failover.load_history("k")] == ["장애 중 질문"]

    async def test_redis_is_probed_at_most_every_interval_and_used_again(
        self, primary, failover, clock, metrics: Metrics
    ):
        primary.down = True
        await failover.claim("Ev1", 60)
        primary.down = False
        calls = primary.calls
        await failover.claim("Ev2", 60)
        assert primary.calls == calls  # no probe before the interval
        assert failover.degraded
        clock.advance(3)
        assert await failover.claim("Ev3", 60) is True
        assert not failover.degraded
        assert await primary.store.claim("Ev3", 60) is False  # written to the primary
        assert metrics.value("regbot_state_degraded") == 0

    async def test_ping_is_ready_while_degraded(self, primary, failover):
        primary.down = True
        await failover.claim("Ev1", 60)
        assert await failover.ping() is True
        assert failover.degraded
