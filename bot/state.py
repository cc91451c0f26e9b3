"""Bot state: conversation history, dedupe claims, per-conversation locks, token buckets, cache, feedback.

`RedisStateStore` shares state across replicas; `MemoryStateStore` keeps it in-process (no `REDIS_URL`);
`FailoverStateStore` uses Redis and falls back to memory while Redis is unreachable.
`ConversationLocks` builds "one answer at a time per conversation" on top of any store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import JsonValue
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from rag.errors import RegbotError
from rag.models import Message

if TYPE_CHECKING:
    from bot.metrics import Metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")

HISTORY_MAX_MESSAGES = 20
HISTORY_TTL_S = 7 * 24 * 3600
FEEDBACK_MAX_RECORDS = 100_000


class StateUnavailable(RegbotError):
    """The state backend (Redis) cannot be reached; FailoverStateStore switches to in-process state."""


class StateStore(Protocol):
    """Every piece of state the bot keeps between turns. Times are seconds; `now` is the caller's clock."""

    async def ping(self) -> bool:
        """True when the backend answers (readiness)."""
        ...

    async def load_history(self, conversation_key: str) -> list[Message]:
        """The stored conversation, oldest first (at most the last `history_max_messages`)."""
        ...

    async def has_history(self, conversation_key: str) -> bool: ...

    async def append_history(self, conversation_key: str, messages: Sequence[Message]) -> None:
        """Append messages, keep only the newest ones and restart the conversation's TTL."""
        ...

    async def claim(self, key: str, ttl_s: float) -> bool:
        """True for the first claim of `key` within `ttl_s` (SET NX EX); False for every later one."""
        ...

    async def try_lock(self, name: str, token: str, ttl_s: float) -> bool:
        """Take the lock `name` for `token` unless someone holds it; it expires after `ttl_s`."""
        ...

    async def refresh_lock(self, name: str, token: str, ttl_s: float) -> bool:
        """Extend the lock while `token` still holds it; False when it was lost."""
        ...

    async def release_lock(self, name: str, token: str) -> bool:
        """Release the lock only when `token` holds it."""
        ...

    async def take_token(self, bucket: str, *, capacity: float, refill_per_s: float, now: float) -> float:
        """Take one token from a bucket: 0.0 when allowed, else seconds until a token is available."""
        ...

    async def cache_get(self, key: str) -> JsonValue | None: ...

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None: ...

    async def generation(self, namespace: str) -> int:
        """The invalidation counter of a cache namespace (0 until bumped)."""
        ...

    async def bump_generation(self, namespace: str) -> int:
        """Invalidate a cache namespace (e.g. after ingest); returns the new generation."""
        ...

    async def append_feedback(self, record: str) -> None:
        """Append one JSON feedback record."""
        ...

    async def recent_feedback(self, limit: int = 100) -> list[str]:
        """The newest feedback records (JSON), oldest first."""
        ...

    async def close(self) -> None: ...


# --- in-process --------------------------------------------------------------


@dataclass
class _Expiring:
    value: str
    expires_at: float


@dataclass
class _StoredHistory:
    messages: deque[Message]
    expires_at: float


@dataclass
class _Bucket:
    tokens: float
    updated_at: float


class MemoryStateStore:
    """In-process state: no Redis configured, tests, and the fallback of FailoverStateStore.

    `clock` (monotonic seconds) decides expiry; tests pass a fake clock to expire locks and claims.
    """

    # Expired entries are swept every this many writes so a long-running process does not grow.
    _SWEEP_EVERY_WRITES = 1000

    def __init__(
        self,
        *,
        history_max_messages: int = HISTORY_MAX_MESSAGES,
        history_ttl_s: float = HISTORY_TTL_S,
        feedback_max_records: int = FEEDBACK_MAX_RECORDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if history_max_messages < 1:
            raise ValueError("history_max_messages must be at least 1")
        self._history_max = history_max_messages
        self._history_ttl_s = history_ttl_s
        self._clock = clock
        self._history: dict[str, _StoredHistory] = {}
        self._values: dict[str, _Expiring] = {}  # claims, locks, cache entries
        self._buckets: dict[str, _Bucket] = {}
        self._generations: dict[str, int] = {}
        self._feedback: deque[str] = deque(maxlen=feedback_max_records)
        self._writes = 0

    async def ping(self) -> bool:
        return True

    async def load_history(self, conversation_key: str) -> list[Message]:
        stored = self._history.get(conversation_key)
        if stored is None or stored.expires_at <= self._clock():
            return []
        return list(stored.messages)

    async def has_history(self, conversation_key: str) -> bool:
        return bool(await self.load_history(conversation_key))

    async def append_history(self, conversation_key: str, messages: Sequence[Message]) -> None:
        self._count_write()
        now = self._clock()
        stored = self._history.get(conversation_key)
        if stored is None or stored.expires_at <= now:
            stored = _StoredHistory(deque(maxlen=self._history_max), 0.0)
            self._history[conversation_key] = stored
        stored.messages.extend(messages)
        stored.expires_at = now + self._history_ttl_s

    async def claim(self, key: str, ttl_s: float) -> bool:
        return self._set_if_absent(f"claim:{key}", "1", ttl_s)

    async def try_lock(self, name: str, token: str, ttl_s: float) -> bool:
        return self._set_if_absent(f"lock:{name}", token, ttl_s)

    async def refresh_lock(self, name: str, token: str, ttl_s: float) -> bool:
        held = self._live(f"lock:{name}")
        if held is None or held.value != token:
            return False
        held.expires_at = self._clock() + ttl_s
        return True

    async def release_lock(self, name: str, token: str) -> bool:
        held = self._live(f"lock:{name}")
        if held is None or held.value != token:
            return False
        del self._values[f"lock:{name}"]
        return True

    async def take_token(self, bucket: str, *, capacity: float, refill_per_s: float, now: float) -> float:
        state = self._buckets.get(bucket)
        if state is None:
            self._count_write()
            state = self._buckets[bucket] = _Bucket(tokens=capacity, updated_at=now)
        if now > state.updated_at:
            state.tokens = min(capacity, state.tokens + (now - state.updated_at) * refill_per_s)
            state.updated_at = now
        if state.tokens >= 1.0:
            state.tokens -= 1.0
            return 0.0
        return (1.0 - state.tokens) / refill_per_s

    async def cache_get(self, key: str) -> JsonValue | None:
        entry = self._live(f"cache:{key}")
        return None if entry is None else json.loads(entry.value)

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None:
        self._count_write()
        # Stored as JSON so callers get a copy, as they would from Redis.
        self._values[f"cache:{key}"] = _Expiring(json.dumps(value, ensure_ascii=False), self._clock() + ttl_s)

    async def generation(self, namespace: str) -> int:
        return self._generations.get(namespace, 0)

    async def bump_generation(self, namespace: str) -> int:
        self._generations[namespace] = self._generations.get(namespace, 0) + 1
        return self._generations[namespace]

    async def append_feedback(self, record: str) -> None:
        self._feedback.append(record)

    async def recent_feedback(self, limit: int = 100) -> list[str]:
        return list(self._feedback)[-limit:] if limit > 0 else []

    async def close(self) -> None:
        return None

    def _live(self, key: str) -> _Expiring | None:
        entry = self._values.get(key)
        if entry is not None and entry.expires_at <= self._clock():
            del self._values[key]
            return None
        return entry

    def _set_if_absent(self, key: str, value: str, ttl_s: float) -> bool:
        if self._live(key) is not None:
            return False
        self._count_write()
        self._values[key] = _Expiring(value, self._clock() + ttl_s)
        return True

    def _count_write(self) -> None:
        self._writes += 1
        if self._writes % self._SWEEP_EVERY_WRITES == 0:
            now = self._clock()
            self._values = {k: v for k, v in self._values.items() if v.expires_at > now}
            self._history = {k: v for k, v in self._history.items() if v.expires_at > now}
            # A bucket idle long enough is full again, which is what a missing bucket means.
            self._buckets = {k: v for k, v in self._buckets.items() if now - v.updated_at < 3600}


# --- Redis -------------------------------------------------------------------

# Delete the lock only if this token still holds it, so a slow replica never frees someone else's lock.
_RELEASE_LOCK_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_REFRESH_LOCK_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

# Refill by elapsed time, then take one token; atomic so replicas never overspend a bucket.
# Returns the wait in seconds as a string: Lua numbers turn into integers on the way out.
_TAKE_TOKEN_LUA = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
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
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.6f', ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 60000)
return string.format('%.6f', wait)
"""


class RedisStateStore:
    """State in Redis, shared by every replica. Connection problems raise `StateUnavailable`.

    Keys: `{prefix}history:{conversation}` (list of JSON messages), `claim:`, `lock:`, `bucket:` (hash),
    `cache:`, `gen:` and one `feedback` list.
    """

    def __init__(
        self,
        client: Redis,
        *,
        key_prefix: str = "regbot:",
        history_max_messages: int = HISTORY_MAX_MESSAGES,
        history_ttl_s: float = HISTORY_TTL_S,
        feedback_max_records: int = FEEDBACK_MAX_RECORDS,
    ) -> None:
        if history_max_messages < 1:
            raise ValueError("history_max_messages must be at least 1")
        self._redis = client
        self._prefix = key_prefix
        self._history_max = history_max_messages
        self._history_ttl_ms = int(history_ttl_s * 1000)
        self._feedback_max = feedback_max_records
        self._release_lock = client.register_script(_RELEASE_LOCK_LUA)
        self._refresh_lock = client.register_script(_REFRESH_LOCK_LUA)
        self._take_token = client.register_script(_TAKE_TOKEN_LUA)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        socket_timeout_s: float = 1.0,
        connect_timeout_s: float = 0.5,
        max_connections: int = 64,
        pool_timeout_s: float = 5.0,
        **options: Any,
    ) -> RedisStateStore:
        """A store for `REDIS_URL`; short timeouts and a single retry, so an outage shows within seconds.

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
        return cls(Redis.from_pool(pool), **options)

    async def ping(self) -> bool:
        return bool(await self._run(self._redis.ping()))

    async def load_history(self, conversation_key: str) -> list[Message]:
        raw = await self._run(self._redis.lrange(self._key("history", conversation_key), 0, -1))
        return [Message.model_validate_json(item) for item in raw]

    async def has_history(self, conversation_key: str) -> bool:
        return bool(await self._run(self._redis.exists(self._key("history", conversation_key))))

    async def append_history(self, conversation_key: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        key = self._key("history", conversation_key)

        async def append() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, *(message.model_dump_json() for message in messages))
                pipe.ltrim(key, -self._history_max, -1)
                pipe.pexpire(key, self._history_ttl_ms)
                await pipe.execute()

        await self._run(append())

    async def claim(self, key: str, ttl_s: float) -> bool:
        return bool(await self._run(self._redis.set(self._key("claim", key), "1", nx=True, px=_ms(ttl_s))))

    async def try_lock(self, name: str, token: str, ttl_s: float) -> bool:
        return bool(await self._run(self._redis.set(self._key("lock", name), token, nx=True, px=_ms(ttl_s))))

    async def refresh_lock(self, name: str, token: str, ttl_s: float) -> bool:
        keys = [self._key("lock", name)]
        return bool(await self._run(self._refresh_lock(keys=keys, args=[token, _ms(ttl_s)])))

    async def release_lock(self, name: str, token: str) -> bool:
        return bool(await self._run(self._release_lock(keys=[self._key("lock", name)], args=[token])))

    async def take_token(self, bucket: str, *, capacity: float, refill_per_s: float, now: float) -> float:
        args = [repr(float(capacity)), repr(float(refill_per_s)), f"{now:.6f}"]
        wait = await self._run(self._take_token(keys=[self._key("bucket", bucket)], args=args))
        return float(wait)

    async def cache_get(self, key: str) -> JsonValue | None:
        raw = await self._run(self._redis.get(self._key("cache", key)))
        return None if raw is None else json.loads(raw)

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None:
        text = json.dumps(value, ensure_ascii=False)
        await self._run(self._redis.set(self._key("cache", key), text, px=_ms(ttl_s)))

    async def generation(self, namespace: str) -> int:
        raw = await self._run(self._redis.get(self._key("gen", namespace)))
        return int(raw) if raw is not None else 0

    async def bump_generation(self, namespace: str) -> int:
        return int(await self._run(self._redis.incr(self._key("gen", namespace))))

    async def append_feedback(self, record: str) -> None:
        key = f"{self._prefix}feedback"

        async def append() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, record)
                pipe.ltrim(key, -self._feedback_max, -1)
                await pipe.execute()

        await self._run(append())

    async def recent_feedback(self, limit: int = 100) -> list[str]:
        if limit <= 0:
            return []
        return list(await self._run(self._redis.lrange(f"{self._prefix}feedback", -limit, -1)))

    async def close(self) -> None:
        with contextlib.suppress(redis_errors.RedisError, OSError):
            await self._redis.aclose()

    def _key(self, kind: str, name: str) -> str:
        return f"{self._prefix}{kind}:{name}"

    async def _run(self, operation: Awaitable[T]) -> T:
        try:
            return await operation
        except (redis_errors.RedisError, OSError) as exc:
            # Any Redis failure (down, timeout, read-only replica, OOM) is an outage to the bot.
            raise StateUnavailable(f"Redis is unavailable: {type(exc).__name__}: {exc}") from exc


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


# --- failover ----------------------------------------------------------------


class FailoverStateStore:
    """Redis first; on `StateUnavailable` the in-process fallback, until a probe finds Redis again.

    Probes run at most every `probe_interval_s`, on the next operation after the interval. While degraded,
    replicas no longer share dedupe, locks or limits, and history written meanwhile stays in this process.
    """

    def __init__(
        self,
        primary: StateStore,
        fallback: StateStore,
        *,
        metrics: Metrics | None = None,
        probe_interval_s: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._primary = primary
        self._fallback = fallback
        self._metrics = metrics
        self._probe_interval_s = probe_interval_s
        self._clock = clock
        self._degraded = False
        self._last_probe = 0.0

    @property
    def degraded(self) -> bool:
        """True while state is kept in-process because Redis is unreachable."""
        return self._degraded

    async def ping(self) -> bool:
        """Readiness: the bot can serve while degraded, so this is True; see `degraded` for the backend."""
        await self._maybe_recover(force=True)
        return True

    async def load_history(self, conversation_key: str) -> list[Message]:
        return await self._call(lambda store: store.load_history(conversation_key))

    async def has_history(self, conversation_key: str) -> bool:
        return await self._call(lambda store: store.has_history(conversation_key))

    async def append_history(self, conversation_key: str, messages: Sequence[Message]) -> None:
        await self._call(lambda store: store.append_history(conversation_key, messages))

    async def claim(self, key: str, ttl_s: float) -> bool:
        return await self._call(lambda store: store.claim(key, ttl_s))

    async def try_lock(self, name: str, token: str, ttl_s: float) -> bool:
        return await self._call(lambda store: store.try_lock(name, token, ttl_s))

    async def refresh_lock(self, name: str, token: str, ttl_s: float) -> bool:
        return await self._call(lambda store: store.refresh_lock(name, token, ttl_s))

    async def release_lock(self, name: str, token: str) -> bool:
        return await self._call(lambda store: store.release_lock(name, token))

    async def take_token(self, bucket: str, *, capacity: float, refill_per_s: float, now: float) -> float:
        return await self._call(
            lambda store: store.take_token(bucket, capacity=capacity, refill_per_s=refill_per_s, now=now)
        )

    async def cache_get(self, key: str) -> JsonValue | None:
        return await self._call(lambda store: store.cache_get(key))

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None:
        await self._call(lambda store: store.cache_set(key, value, ttl_s))

    async def generation(self, namespace: str) -> int:
        return await self._call(lambda store: store.generation(namespace))

    async def bump_generation(self, namespace: str) -> int:
        return await self._call(lambda store: store.bump_generation(namespace))

    async def append_feedback(self, record: str) -> None:
        await self._call(lambda store: store.append_feedback(record))

    async def recent_feedback(self, limit: int = 100) -> list[str]:
        return await self._call(lambda store: store.recent_feedback(limit))

    async def close(self) -> None:
        await self._primary.close()
        await self._fallback.close()

    async def _call(self, operation: Callable[[StateStore], Awaitable[T]]) -> T:
        await self._maybe_recover()
        if not self._degraded:
            try:
                return await operation(self._primary)
            except StateUnavailable as exc:
                self._switch_to_fallback(exc)
        return await operation(self._fallback)

    def _switch_to_fallback(self, reason: StateUnavailable) -> None:
        if self._degraded:
            return
        self._degraded = True
        self._last_probe = self._clock()
        logger.warning("state store degraded to in-process memory: %s", reason)
        if self._metrics is not None:
            self._metrics.set_state_degraded(True)

    async def _maybe_recover(self, *, force: bool = False) -> None:
        if not self._degraded:
            return
        now = self._clock()
        if not force and now - self._last_probe < self._probe_interval_s:
            return
        # Stamp before awaiting so concurrent turns do not all probe at once.
        self._last_probe = now
        try:
            await self._primary.ping()
        except StateUnavailable as exc:
            logger.debug("state store still degraded: %s", exc)
            return
        if not self._degraded:
            return
        self._degraded = False
        logger.warning("state store back on Redis after an outage")
        if self._metrics is not None:
            self._metrics.set_state_degraded(False)


# --- per-conversation lock ---------------------------------------------------


class LockTimeout(RegbotError):
    """The conversation stayed locked longer than the lock wait; the turn is answered with BUSY."""


@dataclass
class _LocalLock:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class ConversationLocks:
    """One answer at a time per conversation, across replicas.

    An in-process FIFO lock orders the turns of this replica; the store's TTL lock (token, safe release)
    excludes other replicas. The TTL lock is refreshed while held, so it only expires when its holder dies.
    """

    def __init__(
        self,
        store: StateStore,
        *,
        ttl_s: float = 30.0,
        wait_s: float = 180.0,
        poll_s: float = 0.02,
        max_poll_s: float = 0.25,
    ) -> None:
        if ttl_s <= 0 or wait_s <= 0:
            raise ValueError("ttl_s and wait_s must be positive")
        self._store = store
        self._ttl_s = ttl_s
        self._wait_s = wait_s
        self._poll_s = poll_s
        self._max_poll_s = max_poll_s
        self._local: dict[str, _LocalLock] = {}
        self._waiting: dict[str, int] = {}

    def waiting(self, conversation_key: str) -> int:
        """How many turns of this replica wait for the conversation's lock."""
        return self._waiting.get(conversation_key, 0)

    @contextlib.asynccontextmanager
    async def hold(self, conversation_key: str) -> AsyncIterator[None]:
        """Hold the conversation's lock for the body; raises `LockTimeout` after `wait_s`."""
        local = self._local.setdefault(conversation_key, _LocalLock())
        local.users += 1
        token = secrets.token_hex(16)
        try:
            self._waiting[conversation_key] = self._waiting.get(conversation_key, 0) + 1
            try:
                await self._acquire(conversation_key, local.lock, token)
            finally:
                self._waiting[conversation_key] -= 1
                if not self._waiting[conversation_key]:
                    del self._waiting[conversation_key]
            keep_alive = asyncio.create_task(self._keep_alive(conversation_key, token))
            try:
                yield
            finally:
                keep_alive.cancel()
                try:
                    await self._release(conversation_key, token)
                finally:
                    # Even when cancelled mid-release: a stuck local lock would block the thread for good.
                    local.lock.release()
        finally:
            local.users -= 1
            if not local.users:
                self._local.pop(conversation_key, None)

    async def _acquire(self, conversation_key: str, local_lock: asyncio.Lock, token: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._wait_s
        try:
            async with asyncio.timeout_at(deadline):
                await local_lock.acquire()
        except TimeoutError as exc:
            raise LockTimeout(f"conversation locked in this replica for over {self._wait_s:.0f} s") from exc
        delay = self._poll_s
        try:
            while not await self._store.try_lock(conversation_key, token, self._ttl_s):
                if loop.time() + delay > deadline:
                    raise LockTimeout(f"conversation locked by another replica for over {self._wait_s:.0f} s")
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_poll_s)
        except BaseException:
            local_lock.release()
            raise

    async def _keep_alive(self, conversation_key: str, token: str) -> None:
        while True:
            await asyncio.sleep(self._ttl_s / 3)
            try:
                if not await self._store.refresh_lock(conversation_key, token, self._ttl_s):
                    logger.warning("conversation lock expired while held; another turn may run alongside")
                    return
            except StateUnavailable as exc:
                logger.warning("could not refresh a conversation lock: %s", exc)

    async def _release(self, conversation_key: str, token: str) -> None:
        try:
            await self._store.release_lock(conversation_key, token)
        except StateUnavailable as exc:
            # The TTL frees it; nothing else to do.
            logger.warning("could not release a conversation lock: %s", exc)


__all__ = [
    "ConversationLocks",
    "FailoverStateStore",
    "LockTimeout",
    "MemoryStateStore",
    "RedisStateStore",
    "StateStore",
    "StateUnavailable",
]
