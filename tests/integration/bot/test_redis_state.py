from __future__ import annotations

import asyncio
import logging

import pytest
import redis.asyncio as redis_async

from bot.service.metrics import Metrics
from bot.state import RedisConnection, StateStores, StateUnavailable
from bot.state.redis import RedisCache, RedisClaims, RedisHistory, RedisLocks, RedisRateBuckets
from rag.models import Message, Role
from tests.polling import wait_until


def user(text: str) -> Message:
    return Message(role=Role.USER, content=text)


async def key_exists(url: str, key: str) -> bool:
    raw = redis_async.Redis.from_url(url)
    try:
        return await raw.exists(key) == 1
    finally:
        await raw.aclose()


class TestRedisState:
    async def test_history_is_capped_and_has_a_ttl(self, make_redis, redis_server, key_prefix):
        history = RedisHistory(make_redis(), max_messages=3, ttl_s=3600)
        await history.append("slack:T1:C1:1.0", [user("하나"), user("둘")])
        await history.append("slack:T1:C1:1.0", [user("셋"), user("넷")])
        assert [m.content for m in await history.load("slack:T1:C1:1.0")] == ["둘", "셋", "넷"]
        assert await history.exists("slack:T1:C1:1.0")
        raw = redis_async.Redis.from_url(redis_server.url)
        try:
            ttl_s = await raw.ttl(f"{key_prefix}history:slack:T1:C1:1.0")
        finally:
            await raw.aclose()
        assert 3500 < ttl_s <= 3600

    async def test_concurrent_claims_have_exactly_one_winner(self, make_redis):
        replicas = [RedisClaims(make_redis()) for _ in range(4)]
        results = await asyncio.gather(*(claims.claim("slack:event:Ev1", 60) for claims in replicas * 5))
        assert results.count(True) == 1

    async def test_lock_is_exclusive_and_released_only_by_its_holder(self, make_redis):
        first, second = RedisLocks(make_redis()), RedisLocks(make_redis())
        held = await first.acquire("thread", 30)
        assert held is not None
        assert await second.acquire("thread", 30) is None
        assert await held.refresh()
        await held.release()
        assert await second.acquire("thread", 30) is not None

    async def test_expired_lock_can_be_taken_by_another_replica_and_not_refreshed_by_the_dead(self, make_redis):
        dead, alive = RedisLocks(make_redis()), RedisLocks(make_redis())
        lost = await dead.acquire("thread", 0.05)

        async def taken():
            return await alive.acquire("thread", 30)

        await wait_until(taken, timeout_s=10, interval_s=0.02)
        assert await lost.refresh() is False
        await lost.release()  # a no-op: the lock is someone else's now
        assert await alive.acquire("thread", 30) is None

    async def test_token_bucket_is_shared_and_atomic_across_clients(self, make_redis):
        replicas = [RedisRateBuckets(make_redis()) for _ in range(3)]
        grants = await asyncio.gather(
            *(buckets.take("user:U1", capacity=3, refill_per_s=0.5, now=1000.0) for buckets in replicas * 4)
        )
        assert sorted(grants)[-3:] == [(True, 0.0)] * 3
        assert all(grant == (False, pytest.approx(2.0)) for grant in sorted(grants)[:-3])
        assert await replicas[0].take("user:U1", capacity=3, refill_per_s=0.5, now=1002.0) == (True, 0.0)

    async def test_token_bucket_lends_ahead_like_the_in_process_one(self, make_redis):
        buckets = RedisRateBuckets(make_redis())
        grants = [await buckets.take("w", capacity=1, refill_per_s=0.5, now=0.0, max_wait_s=4.0) for _ in range(4)]
        assert grants == [(True, 0.0), (True, 2.0), (True, 4.0), (False, 6.0)]

    async def test_cache_round_trips_json(self, make_redis):
        cache = RedisCache(make_redis())
        await cache.cache_set("q", {"answer": "연차 15일", "n": 2}, ttl_s=60)
        assert await cache.cache_get("q") == {"answer": "연차 15일", "n": 2}
        assert await cache.cache_get("missing") is None

    async def test_unreachable_redis_raises_state_unavailable(self, redis_server):
        connection = RedisConnection.from_url("redis://127.0.0.1:1/0")
        try:
            with pytest.raises(StateUnavailable, match="Redis is unavailable"):
                await RedisClaims(connection).claim("x", 10)
        finally:
            await connection.close()


class TestFailoverOnRealRedis:
    async def test_a_claim_taken_while_redis_was_killed_is_in_redis_after_its_restart(
        self, make_redis, redis_server, key_prefix, caplog
    ):
        metrics = Metrics()
        state = StateStores.on_redis(make_redis(), metrics=metrics, probe_interval_s=0.1)
        assert await state.claims.claim("Ev-before", 60)
        assert await key_exists(redis_server.url, f"{key_prefix}claim:Ev-before")

        redis_server.stop()
        try:
            with caplog.at_level(logging.WARNING, logger="bot.state"):
                assert await state.claims.claim("Ev-during", 60) is True
                assert await state.claims.claim("Ev-during", 60) is False  # dedupe still works in memory
                await state.history.append("slack:T1:C1:2.0", [user("장애 중 질문")])
                assert [m.content for m in await state.history.load("slack:T1:C1:2.0")] == ["장애 중 질문"]
            assert state.degraded
            assert "degraded to in-process memory" in caplog.text
            assert metrics.value("regbot_state_degraded") == 1
        finally:
            redis_server.start()

        async def back_on_redis() -> bool:
            await state.history.exists("probe")
            return not state.degraded

        await wait_until(back_on_redis, timeout_s=10, interval_s=0.02)
        # Written through: another replica on this Redis sees it as taken.
        assert await key_exists(redis_server.url, f"{key_prefix}claim:Ev-during")
        assert await RedisClaims(make_redis()).claim("Ev-during", 60) is False
        assert await state.claims.claim("Ev-after", 60)
        assert await key_exists(redis_server.url, f"{key_prefix}claim:Ev-after")
        assert metrics.value("regbot_state_degraded") == 0
