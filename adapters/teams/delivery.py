"""Delivering activities to the Bot Connector: the sender and clock the renderers are given, and the retry
policy (429/412/502/503/504 back off and retry; 413 shortens the text and tries again)."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from adapters.teams import cards
from rag.llm import RetryPolicy

logger = logging.getLogger(__name__)

Payload = dict[str, Any]


class Clock(Protocol):
    """Monotonic time and sleeping; injected so tests control throttling and backoff."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ConnectorCallFailed(Exception):
    """The Bot Connector refused a send or an update (its HTTP status, Retry-After and body text)."""

    def __init__(self, status: int, *, retry_after_s: float | None = None, detail: str = "") -> None:
        super().__init__(f"Bot Connector answered {status}")
        self.status = status
        self.retry_after_s = retry_after_s
        self.detail = detail

    @property
    def stream_expired(self) -> bool:
        """A 403 because the stream passed Teams' two-minute limit (not because the user stopped it)."""
        return self.status == 403 and "streaming time" in self.detail.lower()


class ActivitySender(Protocol):
    """Where rendered activities go: the conversation of the turn being answered."""

    async def send(self, activity: Payload) -> str:
        """Post an activity; returns its id (for the first stream update: the stream id)."""
        ...

    async def update(self, activity_id: str, activity: Payload) -> None:
        """Replace a message the bot sent earlier."""
        ...


# Connector answers worth another try: throttled (429), a stale stream sequence (412), a gateway hiccup.
RETRY_STATUSES = frozenset({412, 429, 502, 503, 504})
# The one retry policy of the tree (rag.llm.RetryPolicy), with the connector's patience: four attempts, a
# throttling Retry-After honoured up to 16 s.
CONNECTOR_RETRY = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=16.0, max_retry_after_s=16.0)


class Deliverer:
    """Connector calls with the retry policy and the 413 fallback (shorten and try again)."""

    _MIN_SHORTENED_CHARS = 500

    def __init__(self, sender: ActivitySender, clock: Clock, policy: RetryPolicy) -> None:
        self._sender = sender
        self._clock = clock
        self._policy = policy

    async def send(self, payload: Payload, *, retry: bool = True) -> str:
        return await self._call(lambda: self._sender.send(payload), retry=retry)

    async def update(self, activity_id: str, payload: Payload, *, retry: bool = True) -> str:
        async def call() -> str:
            await self._sender.update(activity_id, payload)
            return activity_id

        return await self._call(call, retry=retry)

    async def deliver_text(self, build: Callable[[str], Payload], text: str, *, replace: str | None) -> str:
        """Post `build(text)` (or update message `replace` with it); a 413 halves the text and retries."""
        while True:
            payload = build(text)
            try:
                if replace:
                    return await self.update(replace, payload)
                return await self.send(payload)
            except ConnectorCallFailed as error:
                if error.status != 413 or len(text) <= self._MIN_SHORTENED_CHARS:
                    raise
                logger.warning("Teams refused a %d-character message as too large; shortening it", len(text))
                text = cards.shorten(text, max(len(text) // 2, self._MIN_SHORTENED_CHARS))

    async def _call(self, call: Callable[[], Awaitable[str]], *, retry: bool) -> str:
        attempts = self._policy.max_attempts if retry else 1
        for attempt in range(1, attempts + 1):
            try:
                return await call()
            except ConnectorCallFailed as error:
                if error.status not in RETRY_STATUSES or attempt >= attempts:
                    raise
                retry_after = error.retry_after_s if error.retry_after_s is not None and error.retry_after_s >= 0 \
                    else None
                delay = self._policy.delay_s(attempt, retry_after, random.random())
                logger.info("Bot Connector answered %d; retrying in %.1f s", error.status, delay)
                await self._clock.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")


__all__ = ["CONNECTOR_RETRY", "ActivitySender", "Clock", "ConnectorCallFailed", "Deliverer", "Payload", "SystemClock"]
