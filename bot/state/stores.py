"""All of the bot's state, one attribute per concern, built in process or on Redis with failover."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.state.base import EventClaims, HistoryStore, LockBackend, RateBuckets
from bot.state.failover import BackendSwitch, WriteThroughClaims, with_failover
from bot.state.memory import MemoryClaims, MemoryHistory, MemoryLocks, MemoryRateBuckets
from bot.state.redis import (
    RedisCache,
    RedisClaims,
    RedisConnection,
    RedisHistory,
    RedisLocks,
    RedisRateBuckets,
)
from rag.cache import CacheBackend, MemoryCacheBackend

if TYPE_CHECKING:
    from bot.service.metrics import Metrics


async def _nothing_to_close() -> None:
    return None


@dataclass
class StateStores:
    """Each concern behind its own narrow protocol; a component is handed only the one it uses.

    `switch` is set when Redis is behind them (it knows whether Redis is reachable).
    """

    claims: EventClaims
    locks: LockBackend
    buckets: RateBuckets
    history: HistoryStore
    cache: CacheBackend
    switch: BackendSwitch | None = None
    close_backend: Callable[[], Awaitable[None]] = field(default=_nothing_to_close, repr=False)

    @classmethod
    def in_process(cls, *, clock: Callable[[], float] = time.monotonic) -> StateStores:
        """State in this process only (no `REDIS_URL`, tests)."""
        return cls(
            claims=MemoryClaims(clock=clock),
            locks=MemoryLocks(clock=clock),
            buckets=MemoryRateBuckets(),
            history=MemoryHistory(clock=clock),
            cache=MemoryCacheBackend(clock=clock),
        )

    @classmethod
    def on_redis(
        cls,
        redis: RedisConnection,
        *,
        metrics: Metrics | None = None,
        probe_interval_s: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> StateStores:
        """Redis shared by every replica, with in-process state while it is unreachable."""
        switch = BackendSwitch(redis.ping, metrics=metrics, probe_interval_s=probe_interval_s, clock=clock)
        local = cls.in_process(clock=clock)
        return cls(
            claims=WriteThroughClaims(switch, RedisClaims(redis), MemoryClaims(clock=clock)),
            locks=with_failover(switch, RedisLocks(redis), local.locks),
            buckets=with_failover(switch, RedisRateBuckets(redis), local.buckets),
            history=with_failover(switch, RedisHistory(redis), local.history),
            cache=with_failover(switch, RedisCache(redis), local.cache),
            switch=switch,
            close_backend=redis.close,
        )

    @property
    def degraded(self) -> bool:
        """True while Redis is configured but unreachable and state is kept in process."""
        return self.switch is not None and self.switch.degraded

    async def ping(self) -> bool:
        """Readiness: True while the bot can keep state (also while degraded; see `degraded`)."""
        if self.switch is not None:
            await self.switch.probe(force=True)
        return True

    async def close(self) -> None:
        await self.close_backend()


__all__ = ["StateStores"]
