"""Limits that protect the bot and the LLM budget: input size, token buckets, and a queue of answer slots."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.service.metrics import Metrics
    from bot.state import RateBuckets


class LimitsConfig(BaseModel):
    """Every limit the service applies to a turn (env vars in `bot.config.Settings`, documented in
    docs/deployment.md). A burst of 0 turns that token bucket off.

    A person who floods is refused politely (their bucket never lends). A channel or workspace burst waits its
    turn instead: their buckets lend tokens ahead for up to `rate_wait_max_s`, and the turn waits, showing its
    place, until its token is due. Answer slots are the real bound on work: `max_active_answers` at once per
    process, `max_waiting_answers` more in line, each seeing its updated position.
    """

    model_config = ConfigDict(frozen=True)

    max_question_chars: int = Field(4000, ge=1)
    # A person asks a few questions in a row, then reads.
    user_burst: int = Field(5, ge=0)
    user_refill_per_min: float = Field(6.0, gt=0)
    # A channel or a workspace shares a larger budget; past it, turns queue rather than fail.
    channel_burst: int = Field(60, ge=0)
    channel_refill_per_min: float = Field(120.0, gt=0)
    workspace_burst: int = Field(60, ge=0)
    workspace_refill_per_min: float = Field(120.0, gt=0)
    rate_wait_max_s: float = Field(120.0, ge=0)
    # Answer slots per process; the LLM provider's concurrency is the real bound. Waiting costs nothing.
    max_active_answers: int = Field(8, ge=1)
    max_waiting_answers: int = Field(500, ge=0)
    # The per-conversation lock: refreshed while held, so the TTL only matters when a replica dies.
    lock_ttl_s: float = Field(30.0, gt=0)
    lock_wait_s: float = Field(180.0, gt=0)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> LimitsConfig:
        """The limits `Settings` configures; `overrides` (benchmarks, tests) win."""
        values: dict[str, object] = {
            "max_question_chars": settings.max_question_chars,
            "user_burst": settings.user_burst,
            "user_refill_per_min": settings.user_per_min,
            "channel_burst": settings.channel_burst,
            "channel_refill_per_min": settings.channel_per_min,
            "workspace_burst": settings.workspace_burst,
            "workspace_refill_per_min": settings.workspace_per_min,
            "rate_wait_max_s": settings.rate_wait_max_s,
            "max_active_answers": settings.max_active_answers,
            "max_waiting_answers": settings.max_waiting_answers,
        }
        values.update(overrides)
        return cls.model_validate(values)


class RateDecision(NamedTuple):
    """What the buckets say about a turn: refused (`retry_after_s` > 0), or admitted after `wait_s` seconds,
    during which `per_s` turns ahead of it go each second (for its queue position)."""

    retry_after_s: float = 0.0
    wait_s: float = 0.0
    per_s: float = 1.0


class RateLimiter:
    """Per-user, per-channel and per-workspace token buckets, kept in shared state so replicas share them."""

    def __init__(self, buckets: RateBuckets, config: LimitsConfig) -> None:
        self._buckets = buckets
        self._config = config

    async def check(self, *, user_key: str, channel_key: str, workspace_key: str, now: float) -> RateDecision:
        """Take the turn's tokens: refused when the user floods or the line is longer than `rate_wait_max_s`."""
        config = self._config
        if config.user_burst and user_key:
            grant = await self._buckets.take(
                f"user:{user_key}", capacity=config.user_burst, refill_per_s=config.user_refill_per_min / 60, now=now
            )
            if not grant.granted:
                return RateDecision(retry_after_s=grant.wait_s)
        decision = RateDecision()
        shared = (
            ("channel", channel_key, config.channel_burst, config.channel_refill_per_min),
            ("workspace", workspace_key, config.workspace_burst, config.workspace_refill_per_min),
        )
        for kind, key, burst, per_min in shared:
            if not (burst and key):
                continue
            per_s = per_min / 60
            grant = await self._buckets.take(
                f"{kind}:{key}", capacity=burst, refill_per_s=per_s, now=now, max_wait_s=config.rate_wait_max_s
            )
            if not grant.granted:
                return RateDecision(retry_after_s=grant.wait_s)
            if grant.wait_s > decision.wait_s:
                decision = RateDecision(wait_s=grant.wait_s, per_s=per_s)
        return decision


class QueueTicket:
    """A turn's place for an answer slot: admitted at once, or waiting with a 1-based queue position."""

    def __init__(self, queue: AnswerQueue, *, admitted: bool) -> None:
        self._queue = queue
        self._admitted = admitted
        self._released = False
        self._changed = asyncio.Event()

    @property
    def admitted(self) -> bool:
        return self._admitted

    @property
    def position(self) -> int:
        """0 once admitted, else the place in the queue (1 is next)."""
        return 0 if self._admitted else self._queue._position(self)

    async def positions(self) -> AsyncIterator[int]:
        """Yield the queue position each time it changes; return once a slot is granted."""
        last = 0
        while True:
            self._changed.clear()
            if self._admitted:
                return
            position = self._queue._position(self)
            if position != last:
                last = position
                yield position
                continue
            await self._changed.wait()

    def release(self) -> None:
        """Give the slot back, or leave the queue; safe to call twice."""
        if self._released:
            return
        self._released = True
        self._queue._leave(self)

    def _notify(self, *, admitted: bool = False) -> None:
        if admitted:
            self._admitted = True
        self._changed.set()


class AnswerQueue:
    """At most `max_active` answers at once in this process; up to `max_waiting` more wait in FIFO order."""

    def __init__(self, *, max_active: int, max_waiting: int, metrics: Metrics | None = None) -> None:
        if max_active < 1 or max_waiting < 0:
            raise ValueError("max_active must be at least 1 and max_waiting at least 0")
        self._max_active = max_active
        self._max_waiting = max_waiting
        self._metrics = metrics
        self._active = 0
        self._waiters: list[QueueTicket] = []

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_enter(self) -> QueueTicket | None:
        """A ticket (admitted or queued), or None when the queue is full."""
        if self._active < self._max_active and not self._waiters:
            self._active += 1
            ticket = QueueTicket(self, admitted=True)
        elif len(self._waiters) < self._max_waiting:
            ticket = QueueTicket(self, admitted=False)
            self._waiters.append(ticket)
        else:
            return None
        self._publish()
        return ticket

    def _position(self, ticket: QueueTicket) -> int:
        return self._waiters.index(ticket) + 1

    def _leave(self, ticket: QueueTicket) -> None:
        if ticket.admitted:
            if self._waiters:
                # Hand the slot straight to the next turn so a newcomer cannot jump the queue.
                self._waiters.pop(0)._notify(admitted=True)
                self._notify_waiters()
            else:
                self._active -= 1
        elif ticket in self._waiters:
            self._waiters.remove(ticket)
            self._notify_waiters()
        self._publish()

    def _notify_waiters(self) -> None:
        for waiter in self._waiters:
            waiter._notify()

    def _publish(self) -> None:
        if self._metrics is not None:
            self._metrics.set_queue(waiting=len(self._waiters), active=self._active)


__all__ = ["AnswerQueue", "LimitsConfig", "QueueTicket", "RateDecision", "RateLimiter"]
