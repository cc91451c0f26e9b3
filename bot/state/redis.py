"""State in Redis, shared by every replica. Any Redis failure raises `StateUnavailable`.

Keys under one prefix: `history:{conversation}` (list of JSON messages), `claim:`, `lock:` (redis-py's lock),
`bucket:` (hash) and `cache:`. Votes are turn records (`bot.report.records`), under the records' retention and purge.
"""

from __future__ import annotations

import contextlib
import json
import math
import secrets
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from pydantic import JsonValue
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.lock import Lock
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from bot.state.base import HISTORY_MAX_MESSAGES, HISTORY_TTL_S, StateUnavailable, TokenGrant
from rag.models import Message

T = TypeVar("T")


class RedisConnection:
    """One client and key prefix for every Redis-backed concern; turns Redis errors into `StateUnavailable`."""

    def __init__(self, client: Redis, *, key_prefix: str = "regbot:") -> None:
        self.client = client
        self.prefix = key_prefix

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        key_prefix: str = "regbot:",
        socket_timeout_s: float = 1.0,
        connect_timeout_s: float = 0.5,
        max_connections: int = 64,
        pool_timeout_s: float = 5.0,
    ) -> RedisConnection:
        """A connection for `REDIS_URL`; short timeouts and a single retry, so an outage shows within seconds.

        When all connections are busy a call waits up to `pool_timeout_s` for one instead of failing a burst.
        """
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=pool_timeout_s,
            socket_timeout=socket_timeout_s,
            socket_connect_timeout=connect_timeout_s,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        return cls(Redis.from_pool(pool), key_prefix=key_prefix)

    def key(self, kind: str, name: str = "") -> str:
        return f"{self.prefix}{kind}:{name}" if name else f"{self.prefix}{kind}"

    async def run(self, operation: Awaitable[T]) -> T:
        try:
            return await operation
        except (redis_errors.RedisError, OSError) as exc:
            # Any Redis failure (down, timeout, read-only replica, OOM) is an outage to the bot.
            raise StateUnavailable(f"Redis is unavailable: {type(exc).__name__}: {exc}") from exc

    async def ping(self) -> bool:
        return bool(await self.run(self.client.ping()))

    async def close(self) -> None:
        with contextlib.suppress(redis_errors.RedisError, OSError):
            await self.client.aclose()


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class RedisClaims:
    """Event claims: SET NX PX, so exactly one replica wins."""

    def __init__(self, redis: RedisConnection) -> None:
        self._redis = redis

    async def claim(self, key: str, ttl_s: float) -> bool:
        client = self._redis.client
        return bool(await self._redis.run(client.set(self._redis.key("claim", key), "1", nx=True, px=_ms(ttl_s))))


class _RedisHeldLock:
    def __init__(self, redis: RedisConnection, lock: Lock) -> None:
        self._redis = redis
        self._lock = lock

    async def refresh(self) -> bool:
        try:
            return bool(await self._redis.run(self._lock.reacquire()))
        except StateUnavailable as exc:
            if isinstance(exc.__cause__, redis_errors.LockError):
                return False  # expired, or taken over by another replica
            raise

    async def release(self) -> None:
        try:
            await self._redis.run(self._lock.release())
        except StateUnavailable as exc:
            if not isinstance(exc.__cause__, redis_errors.LockError):
                raise


class RedisLocks:
    """TTL locks shared by replicas: redis-py's `Lock` (token per holder, atomic release and extend)."""

    def __init__(self, redis: RedisConnection) -> None:
        self._redis = redis

    async def acquire(self, name: str, ttl_s: float) -> _RedisHeldLock | None:
        lock = Lock(self._redis.client, self._redis.key("lock", name), timeout=ttl_s, blocking=False,
                    thread_local=False)
        if not await self._redis.run(lock.acquire(token=secrets.token_hex(16))):
            return None
        return _RedisHeldLock(self._redis, lock)


# The rule of `bot.state.memory.take_from_bucket`, atomic so replicas never overspend a bucket.
# Returns "granted wait" as a string: Lua numbers turn into integers on the way out.
_TAKE_TOKEN_LUA = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
if now > ts then
  tokens = math.min(capacity, tokens + (now - ts) * rate)
  ts = now
end
local granted = 1
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
  if wait <= max_wait then tokens = tokens - 1 else granted = 0 end
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.6f', ts))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity + max_wait * rate) / rate * 1000) + 60000)
return string.format('%d %.6f', granted, wait)
"""


class RedisRateBuckets:
    """Token buckets as Redis hashes, updated by one Lua script."""

    def __init__(self, redis: RedisConnection) -> None:
        self._redis = redis
        self._take = redis.client.register_script(_TAKE_TOKEN_LUA)

    async def take(
        self, bucket: str, *, capacity: float, refill_per_s: float, now: float, max_wait_s: float = 0.0
    ) -> TokenGrant:
        args = [repr(float(capacity)), repr(float(refill_per_s)), f"{now:.6f}", repr(float(max_wait_s))]
        raw = await self._redis.run(self._take(keys=[self._redis.key("bucket", bucket)], args=args))
        granted, wait_s = str(raw).split()
        return TokenGrant(granted == "1", float(wait_s))


class RedisHistory:
    """Conversations as capped Redis lists with a TTL."""

    def __init__(
        self, redis: RedisConnection, *, max_messages: int = HISTORY_MAX_MESSAGES, ttl_s: float = HISTORY_TTL_S
    ) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self._redis = redis
        self._max = max_messages
        self._ttl_ms = _ms(ttl_s)

    async def load(self, conversation_key: str) -> list[Message]:
        raw = await self._redis.run(self._redis.client.lrange(self._redis.key("history", conversation_key), 0, -1))
        return [Message.model_validate_json(item) for item in raw]

    async def exists(self, conversation_key: str) -> bool:
        return bool(await self._redis.run(self._redis.client.exists(self._redis.key("history", conversation_key))))

    async def append(self, conversation_key: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        key = self._redis.key("history", conversation_key)

        async def append() -> None:
            async with self._redis.client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, *(message.model_dump_json() for message in messages))
                pipe.ltrim(key, -self._max, -1)
                pipe.pexpire(key, self._ttl_ms)
                await pipe.execute()

        await self._redis.run(append())


class RedisCache:
    """The answer cache's backend (`rag.cache.CacheBackend`): JSON values with a TTL."""

    def __init__(self, redis: RedisConnection) -> None:
        self._redis = redis

    async def cache_get(self, key: str) -> JsonValue | None:
        raw = await self._redis.run(self._redis.client.get(self._redis.key("cache", key)))
        return None if raw is None else json.loads(raw)

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None:
        text = json.dumps(value, ensure_ascii=False)
        await self._redis.run(self._redis.client.set(self._redis.key("cache", key), text, px=_ms(ttl_s)))


__all__ = [
    "RedisCache",
    "RedisClaims",
    "RedisConnection",
    "RedisHistory",
    "RedisLocks",
    "RedisRateBuckets",
]
