from __future__ import annotations

import asyncio
import logging

import pytest
import redis.asyncio as redis_async

from bot.metrics import Metrics
from bot.state import FailoverStateStore, MemoryStateStore, RedisStateStore, StateUnavailable
from rag.models import Message, Role
from tests.polling import wait_until


def user(text: str) -> Message:
    return Message(role=Role.USER, content=text)


class TestRedisStateStore:
    async def test_history_is_capped_and_has_a_ttl(self, make_redis_store, redis_server, key_prefix):
        store = make_redis_store(history_max_messages=3, history_ttl_s=3600)
        await store.append_history("slack:T1:C1:1.0", [user("하나"), user("둘")])
        await store.append_history("slack:T1:C1:1.0", [user("셋"), user("넷")])
        assert [m.content for m in await store.load_history("slack:T1:C1:1.0")] == ["둘", "셋", "넷"]
        raw = redis_async.Redis.from_url(redis_server.url)
        try:
            ttl_s = await raw.ttl(f"{key_prefix}history:slack:T1:C1:1.0")
        finally:
            await raw.aclose()
        assert 3500 < ttl_s <= 3600

    async def test_concurrent_claims_have_exactly_one_winner(self, make_redis_store):
        stores = [make_redis_store() for _ in range(4)]
        results = await asyncio.gather(*(store.claim("slack:event:Ev1", 60) for store in stores * 5))
        assert results.count(True) == 1

    async def test_lock_is_exclusive_and_released_only_by_its_token(self, make_redis_store):
        first, second = make_redis_store(), make_redis_store()
        assert await first.try_lock("thread", "token-a", 30)
        assert await second.try_lock("thread", "token-b", 30) is False
        assert await second.release_lock("thread", "token-b") is False
        assert await second.refresh_lock("thread", "token-b", 30) is False
        assert await first.refresh_lock("thread", "token-a", 30)
        assert await first.release_lock("thread", "token-a")
        assert await second.try_lock("thread", "token-b", 30)

    async def test_expired_lock_can_be_taken_by_another_replica(self, make_redis_store):
        dead, alive = make_redis_store(), make_redis_store()
        await dead.try_lock("thread", "dead-replica", 0.05)

        async def taken() -> bool:
            return await alive.try_lock("thread", "alive-replica", 30)

        await wait_until(taken, timeout_s=10, interval_s=0.02)
        assert await dead.release_lock("thread", "dead-replica") is False

    async def test_token_bucket_is_shared_and_atomic_across_clients(self, make_redis_store):
        stores = [make_redis_store() for _ in range(3)]
        waits = await asyncio.gather(
            *(store.take_token("user:U1", capacity=3, refill_per_s=0.5, now=1000.0) for store in stores * 4)
        )
        assert sorted(waits)[:3] == [0.0, 0.0, 0.0]
        assert all(wait == pytest.approx(2.0) for wait in sorted(waits)[3:])
        assert await stores[0].take_token("user:U1", capacity=3, refill_per_s=0.5, now=1002.0) == 0.0

    async def test_cache_and_generation(self, make_redis_store):
        store = make_redis_store()
        await store.cache_set("q", {"answer": "연차 15일", "n": 2}, ttl_s=60)
        assert await store.cache_get("q") == {"answer": "연차 15일", "n": 2}
        assert await store.cache_get("missing") is None
        assert await store.generation("semantic") == 0
        assert await make_redis_store().bump_generation("semantic") == 1
        assert await store.generation("semantic") == 1

    async def test_feedback_list_keeps_the_newest(self, make_redis_store):
        store = make_redis_store(feedback_max_records=2)
        for n in range(3):
            await store.append_feedback(f'{{"n": {n}}}')
        assert await store.recent_feedback() == ['{"n": 1}', '{"n": 2}']

    async def test_unreachable_redis_raises_state_unavailable(self, redis_server):
        store = RedisStateStore.from_url("redis://127.0.0.1:1/0")
        try:
            with pytest.raises(StateUnavailable, match="Redis is unavailable"):
                await store.claim("x", 10)
        finally:
            await store.close()


async def key_exists(url: str, key: str) -> bool:
    raw = redis_async.Redis.from_url(url)
    try:
        return await raw.exists(key) == 1
    finally:
        await raw.aclose()


class TestFailoverOnRealRedis:
    async def test_keeps_working_while_redis_is_down_and_returns_after_restart(
        self, make_redis_store, redis_server, key_prefix, caplog
    ):
        metrics = Metrics()
        store = FailoverStateStore(make_redis_store(), MemoryStateStore(), metrics=metrics, probe_interval_s=0.1)
        assert await store.claim("Ev-before", 60)
        assert await key_exists(redis_server.url, f"{key_prefix}claim:Ev-before")

        redis_server.stop()
        try:
            with caplog.at_level(logging.WARNING, logger="bot.state"):
                assert await store.claim("Ev-during", 60) is True
                assert await store.claim("Ev-during", 60) is False  # dedupe still works in memory
                await store.append_history("slack:T1:C1:2.0", [user("장애 중 질문")])
                assert [m.content for m in await store.load_history("slack:T1:C1:2.0")] == ["장애 중 질문"]
            assert store.degraded
            assert "degraded to in-process memory" in caplog.text
            assert metrics.value("regbot_state_degraded") == 1
        finally:
            redis_server.start()

        async def back_on_redis() -> bool:
            await store.generation("probe")
            return not store.degraded

        await wait_until(back_on_redis, timeout_s=10, interval_s=0.02)
        assert await store.claim("Ev-after", 60)
        assert await key_exists(redis_server.url, f"{key_prefix}claim:Ev-after")
        assert metrics.value("regbot_state_degraded") == 0
