from __future__ import annotations

import logging

import pytest

from bot.service.metrics import Metrics
from bot.state import (
    BackendSwitch,
    MemoryClaims,
    MemoryHistory,
    MemoryLocks,
    MemoryRateBuckets,
    StateUnavailable,
    TokenGrant,
    WriteThroughClaims,
    with_failover,
)
from rag.models import Message, Role


def user(text: str) -> Message:
    return Message(role=Role.USER, content=text)


class SwitchableRedis:
    """Stands for Redis: while `down`, every call raises StateUnavailable as the Redis implementations do."""

    def __init__(self) -> None:
        self.down = False
        self.ping_answers_while_down = False  # Redis starting up: PING answers, writes still fail
        self.calls = 0

    def check(self) -> None:
        self.calls += 1
        if self.down:
            raise StateUnavailable("Redis is unavailable: ConnectionError: refused")

    async def ping(self) -> bool:
        if not self.ping_answers_while_down:
            self.check()
        return True


class OnSwitchableRedis:
    """Wraps an in-process implementation so it fails whenever `redis` is down."""

    def __init__(self, redis: SwitchableRedis, inner: object) -> None:
        self._redis = redis
        self._inner = inner

    def __getattr__(self, name: str):
        operation = getattr(self._inner, name)

        async def call(*args, **kwargs):
            self._redis.check()
            return await operation(*args, **kwargs)

        return call


class TestInProcessState:
    async def test_history_keeps_only_the_newest_messages(self, clock):
        history = MemoryHistory(max_messages=3, clock=clock)
        await history.append("k", [user("하나"), user("둘")])
        await history.append("k", [user("셋"), user("넷")])
        assert [m.content for m in await history.load("k")] == ["둘", "셋", "넷"]

    async def test_history_expires_after_its_ttl(self, clock):
        history = MemoryHistory(ttl_s=100, clock=clock)
        await history.append("k", [user("연차 질문")])
        clock.advance(101)
        assert await history.exists("k") is False

    async def test_claim_is_won_once_until_it_expires(self, clock):
        claims = MemoryClaims(clock=clock)
        assert [await claims.claim("Ev1", 60), await claims.claim("Ev1", 60)] == [True, False]
        clock.advance(61)
        assert await claims.claim("Ev1", 60) is True

    async def test_lock_excludes_others_until_released(self, clock):
        locks = MemoryLocks(clock=clock)
        held = await locks.acquire("k", 30)
        assert held is not None
        assert await locks.acquire("k", 30) is None
        await held.release()
        assert await locks.acquire("k", 30) is not None

    async def test_refreshed_lock_outlives_its_first_ttl_and_a_lost_one_cannot_be_refreshed(self, clock):
        locks = MemoryLocks(clock=clock)
        held = await locks.acquire("k", 30)
        clock.advance(20)
        assert await held.refresh()
        clock.advance(20)
        assert await locks.acquire("k", 30) is None
        clock.advance(11)
        other = await locks.acquire("k", 30)
        assert other is not None
        assert await held.refresh() is False
        await held.release()  # not its lock any more: the other holder keeps it
        assert await locks.acquire("k", 30) is None

    async def test_token_bucket_refills_with_time(self):
        buckets = MemoryRateBuckets()

        async def take(now: float) -> TokenGrant:
            return await buckets.take("u", capacity=2, refill_per_s=0.5, now=now)

        assert [await take(0.0) for _ in range(3)] == [(True, 0.0), (True, 0.0), (False, 2.0)]
        assert await take(1.0) == (False, pytest.approx(1.0))
        assert await take(2.0) == (True, 0.0)

    async def test_bucket_lends_tokens_ahead_up_to_the_longest_wait(self):
        buckets = MemoryRateBuckets()

        async def take() -> TokenGrant:
            return await buckets.take("w", capacity=1, refill_per_s=0.5, now=0.0, max_wait_s=4.0)

        assert [await take() for _ in range(4)] == [(True, 0.0), (True, 2.0), (True, 4.0), (False, 6.0)]


class TestFailover:
    @pytest.fixture
    def redis(self) -> SwitchableRedis:
        return SwitchableRedis()

    @pytest.fixture
    def switch(self, redis, clock, metrics) -> BackendSwitch:
        return BackendSwitch(redis.ping, metrics=metrics, probe_interval_s=3, clock=clock)

    @pytest.fixture
    def shared_history(self, clock) -> MemoryHistory:
        return MemoryHistory(clock=clock)  # what Redis holds

    @pytest.fixture
    def history(self, switch, redis, shared_history, clock) -> MemoryHistory:
        return with_failover(switch, OnSwitchableRedis(redis, shared_history), MemoryHistory(clock=clock))

    async def test_outage_switches_to_memory_with_a_warning_and_a_metric(
        self, redis, switch, history, metrics: Metrics, caplog
    ):
        redis.down = True
        with caplog.at_level(logging.WARNING, logger="bot.state"):
            await history.append("k", [user("장애 중 질문")])
        assert switch.degraded
        assert "degraded to in-process memory" in caplog.text
        assert metrics.value("regbot_state_degraded") == 1
        assert metrics.value("regbot_state_failovers_total") == 1
        assert [m.content for m in await history.load("k")] == ["장애 중 질문"]

    async def test_redis_is_probed_at_most_every_interval_and_used_again(
        self, redis, switch, history, shared_history, clock, metrics: Metrics
    ):
        redis.down = True
        await history.append("k1", [user("하나")])
        redis.down = False
        calls = redis.calls
        await history.append("k2", [user("둘")])
        assert redis.calls == calls  # no probe before the interval
        assert switch.degraded
        clock.advance(3)
        await history.append("k3", [user("셋")])
        assert not switch.degraded
        assert [m.content for m in await shared_history.load("k3")] == ["셋"]  # written to Redis
        assert metrics.value("regbot_state_degraded") == 0

    async def test_a_forced_probe_goes_back_at_once(self, redis, switch, history):
        redis.down = True
        await history.exists("k")
        redis.down = False
        await switch.probe(force=True)
        assert not switch.degraded


class TestWriteThroughClaims:
    @pytest.fixture
    def redis(self) -> SwitchableRedis:
        return SwitchableRedis()

    @pytest.fixture
    def switch(self, redis, clock) -> BackendSwitch:
        return BackendSwitch(redis.ping, probe_interval_s=3, clock=clock)

    @pytest.fixture
    def on_redis(self, clock) -> MemoryClaims:
        return MemoryClaims(clock=clock)  # what Redis holds

    def replica(self, switch, redis, on_redis, clock) -> WriteThroughClaims:
        return WriteThroughClaims(switch, OnSwitchableRedis(redis, on_redis), MemoryClaims(clock=clock))

    async def test_claim_taken_during_an_outage_is_written_to_redis_when_it_returns(
        self, redis, switch, on_redis, clock
    ):
        claims = self.replica(switch, redis, on_redis, clock)
        redis.down = True
        assert await claims.claim("slack:event:Ev1", 3600) is True
        assert await claims.claim("slack:event:Ev1", 3600) is False  # the retry, still during the outage
        redis.down = False
        clock.advance(3)
        await switch.probe()
        assert not switch.degraded
        # Another replica, on Redis, sees the claim: its retry is a duplicate.
        assert await on_redis.claim("slack:event:Ev1", 3600) is False
        assert on_redis.remaining_s("slack:event:Ev1") == pytest.approx(3597)

    async def test_switch_stays_degraded_when_the_write_through_fails(self, redis, switch, on_redis, clock):
        claims = self.replica(switch, redis, on_redis, clock)
        redis.down = True
        await claims.claim("slack:event:Ev1", 3600)
        redis.ping_answers_while_down = True
        clock.advance(3)
        await switch.probe()
        assert switch.degraded
        redis.down = False
        clock.advance(3)
        await switch.probe()
        assert not switch.degraded
        assert await on_redis.claim("slack:event:Ev1", 3600) is False

    async def test_a_retry_this_replica_saw_is_a_duplicate_even_if_redis_lost_the_claim(
        self, redis, switch, on_redis, clock
    ):
        claims = self.replica(switch, redis, on_redis, clock)
        assert await claims.claim("slack:event:Ev1", 3600) is True
        on_redis._keys.delete("slack:event:Ev1")  # Redis restarted empty
        assert await claims.claim("slack:event:Ev1", 3600) is False

    async def test_the_same_event_on_two_replicas_is_won_once_on_redis(self, redis, switch, on_redis, clock):
        first = self.replica(switch, redis, on_redis, clock)
        second = self.replica(switch, redis, on_redis, clock)
        assert [await first.claim("Ev1", 60), await second.claim("Ev1", 60)] == [True, False]
