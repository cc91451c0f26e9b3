"""In-process state: no `REDIS_URL`, tests, and the fallback while Redis is unreachable.

`clock` (monotonic seconds) decides expiry; tests pass a fake clock to expire locks and claims. The in-process
answer cache is `rag.cache.MemoryCacheBackend`.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.state.base import HISTORY_MAX_MESSAGES, HISTORY_TTL_S, TokenGrant
from rag.models import Message

Clock = Callable[[], float]


class ExpiringKeys:
    """Keys with a value and an expiry; expired entries are swept every `sweep_every` writes."""

    def __init__(self, clock: Clock, *, sweep_every: int = 1000) -> None:
        self._clock = clock
        self._sweep_every = sweep_every
        self._entries: dict[str, tuple[str, float]] = {}
        self._writes = 0

    def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._entries[key]
            return None
        return entry[0]

    def set(self, key: str, value: str, ttl_s: float) -> None:
        self._writes += 1
        if self._writes % self._sweep_every == 0:
            now = self._clock()
            self._entries = {k: v for k, v in self._entries.items() if v[1] > now}
        self._entries[key] = (value, self._clock() + ttl_s)

    def set_if_absent(self, key: str, value: str, ttl_s: float) -> bool:
        if self.get(key) is not None:
            return False
        self.set(key, value, ttl_s)
        return True

    def remaining_s(self, key: str) -> float:
        """Seconds until `key` expires (0.0 when absent)."""
        entry = self._entries.get(key)
        return max(0.0, entry[1] - self._clock()) if entry else 0.0

    def delete(self, key: str) -> None:
        self._entries.pop(key, None)


class MemoryClaims:
    """Event claims in this process."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._keys = ExpiringKeys(clock)

    async def claim(self, key: str, ttl_s: float) -> bool:
        return self._keys.set_if_absent(key, "1", ttl_s)

    def remaining_s(self, key: str) -> float:
        """How long the claim of `key` still lasts (for writing it through to Redis)."""
        return self._keys.remaining_s(key)


class _MemoryHeldLock:
    def __init__(self, keys: ExpiringKeys, name: str, token: str, ttl_s: float) -> None:
        self._keys, self._name, self._token, self._ttl_s = keys, name, token, ttl_s

    async def refresh(self) -> bool:
        if self._keys.get(self._name) != self._token:
            return False
        self._keys.set(self._name, self._token, self._ttl_s)
        return True

    async def release(self) -> None:
        if self._keys.get(self._name) == self._token:
            self._keys.delete(self._name)


class MemoryLocks:
    """TTL locks in this process (they only exclude other holders of the same process)."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._keys = ExpiringKeys(clock)

    async def acquire(self, name: str, ttl_s: float) -> _MemoryHeldLock | None:
        token = secrets.token_hex(16)
        if not self._keys.set_if_absent(name, token, ttl_s):
            return None
        return _MemoryHeldLock(self._keys, name, token, ttl_s)


@dataclass
class _Bucket:
    tokens: float
    updated_at: float


def take_from_bucket(
    tokens: float, updated_at: float, *, capacity: float, refill_per_s: float, now: float, max_wait_s: float
) -> tuple[float, float, TokenGrant]:
    """The token-bucket rule (the Redis script mirrors it): refill by elapsed time, then take, lend or refuse.

    Returns the new (tokens, updated_at) and the grant. Lent tokens make `tokens` negative; later takers wait
    behind them, which is what makes a burst a queue.
    """
    if now > updated_at:
        tokens = min(capacity, tokens + (now - updated_at) * refill_per_s)
        updated_at = now
    if tokens >= 1.0:
        return tokens - 1.0, updated_at, TokenGrant(True, 0.0)
    wait_s = (1.0 - tokens) / refill_per_s
    if wait_s <= max_wait_s:
        return tokens - 1.0, updated_at, TokenGrant(True, wait_s)
    return tokens, updated_at, TokenGrant(False, wait_s)


class MemoryRateBuckets:
    """Token buckets in this process; buckets idle for an hour are forgotten (they would be full again)."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self._takes = 0

    async def take(
        self, bucket: str, *, capacity: float, refill_per_s: float, now: float, max_wait_s: float = 0.0
    ) -> TokenGrant:
        self._takes += 1
        if self._takes % 1000 == 0:
            self._buckets = {k: v for k, v in self._buckets.items() if now - v.updated_at < 3600}
        state = self._buckets.setdefault(bucket, _Bucket(tokens=capacity, updated_at=now))
        state.tokens, state.updated_at, grant = take_from_bucket(
            state.tokens, state.updated_at, capacity=capacity, refill_per_s=refill_per_s, now=now,
            max_wait_s=max_wait_s,
        )
        return grant


@dataclass
class _StoredHistory:
    messages: deque[Message]
    expires_at: float


class MemoryHistory:
    """Conversations in this process: the newest `max_messages`, forgotten `ttl_s` after the last write."""

    def __init__(
        self, *, max_messages: int = HISTORY_MAX_MESSAGES, ttl_s: float = HISTORY_TTL_S, clock: Clock = time.monotonic
    ) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self._max = max_messages
        self._ttl_s = ttl_s
        self._clock = clock
        self._history: dict[str, _StoredHistory] = {}
        self._writes = 0

    async def load(self, conversation_key: str) -> list[Message]:
        stored = self._history.get(conversation_key)
        if stored is None or stored.expires_at <= self._clock():
            return []
        return list(stored.messages)

    async def exists(self, conversation_key: str) -> bool:
        return bool(await self.load(conversation_key))

    async def append(self, conversation_key: str, messages: Sequence[Message]) -> None:
        now = self._clock()
        self._writes += 1
        if self._writes % 1000 == 0:
            self._history = {k: v for k, v in self._history.items() if v.expires_at > now}
        stored = self._history.get(conversation_key)
        if stored is None or stored.expires_at <= now:
            stored = self._history[conversation_key] = _StoredHistory(deque(maxlen=self._max), 0.0)
        stored.messages.extend(messages)
        stored.expires_at = now + self._ttl_s


__all__ = [
    "ExpiringKeys",
    "MemoryClaims",
    "MemoryHistory",
    "MemoryLocks",
    "MemoryRateBuckets",
    "take_from_bucket",
]
