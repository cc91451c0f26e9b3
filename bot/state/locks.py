"""One answer at a time per conversation, across replicas."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from bot.state.base import HeldLock, LockBackend, StateUnavailable
from rag.errors import RegbotError

logger = logging.getLogger(__name__)


class LockTimeout(RegbotError):
    """The conversation stayed locked longer than the lock wait; the turn is answered with BUSY."""


@dataclass
class _LocalLock:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class ConversationLocks:
    """One answer at a time per conversation, across replicas.

    An in-process FIFO lock orders the turns of this replica; the backend's TTL lock excludes other replicas.
    The TTL lock is refreshed while held, so it only expires when its holder dies.
    """

    def __init__(
        self,
        backend: LockBackend,
        *,
        ttl_s: float = 30.0,
        wait_s: float = 180.0,
        poll_s: float = 0.02,
        max_poll_s: float = 0.25,
    ) -> None:
        if ttl_s <= 0 or wait_s <= 0:
            raise ValueError("ttl_s and wait_s must be positive")
        self._backend = backend
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
        try:
            self._waiting[conversation_key] = self._waiting.get(conversation_key, 0) + 1
            try:
                held = await self._acquire(conversation_key, local.lock)
            finally:
                self._waiting[conversation_key] -= 1
                if not self._waiting[conversation_key]:
                    del self._waiting[conversation_key]
            keep_alive = asyncio.create_task(self._keep_alive(held))
            try:
                yield
            finally:
                keep_alive.cancel()
                try:
                    await self._release(held)
                finally:
                    # Even when cancelled mid-release: a stuck local lock would block the thread for good.
                    local.lock.release()
        finally:
            local.users -= 1
            if not local.users:
                self._local.pop(conversation_key, None)

    async def _acquire(self, conversation_key: str, local_lock: asyncio.Lock) -> HeldLock:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._wait_s
        try:
            async with asyncio.timeout_at(deadline):
                await local_lock.acquire()
        except TimeoutError as exc:
            raise LockTimeout(f"conversation locked in this replica for over {self._wait_s:.0f} s") from exc
        delay = self._poll_s
        try:
            while (held := await self._backend.acquire(conversation_key, self._ttl_s)) is None:
                if loop.time() + delay > deadline:
                    raise LockTimeout(f"conversation locked by another replica for over {self._wait_s:.0f} s")
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_poll_s)
        except BaseException:
            local_lock.release()
            raise
        return held

    async def _keep_alive(self, held: HeldLock) -> None:
        while True:
            await asyncio.sleep(self._ttl_s / 3)
            try:
                if not await held.refresh():
                    logger.warning("conversation lock expired while held; another turn may run alongside")
                    return
            except StateUnavailable as exc:
                logger.warning("could not refresh a conversation lock: %s", exc)

    async def _release(self, held: HeldLock) -> None:
        try:
            await held.release()
        except StateUnavailable as exc:
            # The TTL frees it; nothing else to do.
            logger.warning("could not release a conversation lock: %s", exc)


__all__ = ["ConversationLocks", "LockTimeout"]
