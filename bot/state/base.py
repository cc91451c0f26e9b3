"""The state the bot keeps between turns, one small protocol per concern.

Each concern has an in-process implementation (`bot.state.memory`) and a Redis one (`bot.state.redis`);
`bot.state.failover` puts Redis first and the in-process one behind it. Times are seconds. The answer cache's
protocol is `rag.cache.CacheBackend` (the pipeline owns that concern).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from rag.errors import RegbotError
from rag.models import Message

HISTORY_MAX_MESSAGES = 20
HISTORY_TTL_S = 7 * 24 * 3600


class StateUnavailable(RegbotError):
    """The state backend (Redis) cannot be reached; the failover switches to in-process state."""


class EventClaims(Protocol):
    """Dedupe: who handles a delivered event."""

    async def claim(self, key: str, ttl_s: float) -> bool:
        """True for the first claim of `key` within `ttl_s`; False for every later one."""
        ...


class HeldLock(Protocol):
    """A lock this process holds; it expires unless refreshed."""

    async def refresh(self) -> bool:
        """Restart the lock's TTL; False when it was lost (expired and taken by someone else)."""
        ...

    async def release(self) -> None:
        """Free the lock if this holder still has it."""
        ...


class LockBackend(Protocol):
    """Named TTL locks that exclude other replicas."""

    async def acquire(self, name: str, ttl_s: float) -> HeldLock | None:
        """Take `name` unless someone holds it (no waiting); None when it is held."""
        ...


class TokenGrant(NamedTuple):
    """A bucket's answer: `granted` with `wait_s` until the reserved token is due (0.0: at once), or refused
    with `wait_s` until a token would be due without waiting longer than allowed."""

    granted: bool
    wait_s: float


class RateBuckets(Protocol):
    """Token buckets shared by replicas; a bucket may lend tokens ahead so bursts wait instead of failing."""

    async def take(
        self, bucket: str, *, capacity: float, refill_per_s: float, now: float, max_wait_s: float = 0.0
    ) -> TokenGrant:
        """Take one token, or reserve the next one when it is due within `max_wait_s`; else refuse."""
        ...


class HistoryStore(Protocol):
    """Conversations, keyed by conversation key, newest messages kept."""

    async def load(self, conversation_key: str) -> list[Message]:
        """The stored conversation, oldest first."""
        ...

    async def exists(self, conversation_key: str) -> bool: ...

    async def append(self, conversation_key: str, messages: Sequence[Message]) -> None:
        """Append messages, keep only the newest ones and restart the conversation's TTL."""
        ...


__all__ = [
    "HISTORY_MAX_MESSAGES",
    "HISTORY_TTL_S",
    "EventClaims",
    "HeldLock",
    "HistoryStore",
    "LockBackend",
    "RateBuckets",
    "StateUnavailable",
    "TokenGrant",
]
