"""Bot state between turns, one small protocol per concern (`bot.state.base`).

Dedupe claims, conversation locks, rate buckets, history and the answer cache each have an
in-process implementation (`memory`) and a Redis one (`redis`); `StateStores.on_redis` puts them behind one
`BackendSwitch` (`failover`) that falls back to in-process state while Redis is unreachable and writes the
claims taken meanwhile through when it returns. `ConversationLocks` builds "one answer at a time per
conversation" on any `LockBackend`.
"""

from bot.state.base import (
    EventClaims,
    HeldLock,
    HistoryStore,
    LockBackend,
    RateBuckets,
    StateUnavailable,
    TokenGrant,
)
from bot.state.failover import BackendSwitch, WriteThroughClaims, with_failover
from bot.state.locks import ConversationLocks, LockTimeout
from bot.state.memory import MemoryClaims, MemoryHistory, MemoryLocks, MemoryRateBuckets
from bot.state.redis import RedisConnection
from bot.state.stores import StateStores

__all__ = [
    "BackendSwitch",
    "ConversationLocks",
    "EventClaims",
    "HeldLock",
    "HistoryStore",
    "LockBackend",
    "LockTimeout",
    "MemoryClaims",
    "MemoryHistory",
    "MemoryLocks",
    "MemoryRateBuckets",
    "RateBuckets",
    "RedisConnection",
    "StateStores",
    "StateUnavailable",
    "TokenGrant",
    "WriteThroughClaims",
    "with_failover",
]
