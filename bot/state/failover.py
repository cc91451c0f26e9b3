"""Redis first, in-process state while Redis is unreachable: one switch, one generic proxy, claims written through.

`BackendSwitch` is the one place that knows whether Redis is up: it flips to degraded on the first
`StateUnavailable`, probes Redis at most every `probe_interval_s`, and runs the recovery hooks before it goes
back. `with_failover(switch, primary, fallback)` wraps any concern's pair of implementations. Claims get
`WriteThroughClaims` on top (DESIGN.md §3 "Exactly-once while Redis is down"): a claim taken in process while
Redis is down is written to Redis before the switch goes back, so a retry after the outage is a duplicate there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from bot.state.base import EventClaims, StateUnavailable
from bot.state.memory import MemoryClaims

if TYPE_CHECKING:
    from bot.service.metrics import Metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")
P = TypeVar("P")


class BackendSwitch:
    """Whether state goes to Redis (primary) or stays in process (degraded), shared by every concern."""

    def __init__(
        self,
        ping: Callable[[], Awaitable[bool]],
        *,
        metrics: Metrics | None = None,
        probe_interval_s: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ping = ping
        self._metrics = metrics
        self._probe_interval_s = probe_interval_s
        self._clock = clock
        self._degraded = False
        self._last_probe = 0.0
        self._recovery_hooks: list[Callable[[], Awaitable[None]]] = []

    @property
    def degraded(self) -> bool:
        """True while state is kept in-process because Redis is unreachable."""
        return self._degraded

    def on_recovery(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` when Redis answers again, before state goes back to it; a `StateUnavailable` from it
        keeps the switch degraded until the next probe."""
        self._recovery_hooks.append(hook)

    async def call(self, on_primary: Callable[[], Awaitable[T]], on_fallback: Callable[[], Awaitable[T]]) -> T:
        await self.probe()
        if not self._degraded:
            try:
                return await on_primary()
            except StateUnavailable as exc:
                self._switch_to_fallback(exc)
        return await on_fallback()

    async def probe(self, *, force: bool = False) -> None:
        """While degraded, try Redis (at most every `probe_interval_s` unless `force`) and switch back."""
        if not self._degraded:
            return
        now = self._clock()
        if not force and now - self._last_probe < self._probe_interval_s:
            return
        # Stamp before awaiting so concurrent turns do not all probe at once.
        self._last_probe = now
        try:
            await self._ping()
            for hook in self._recovery_hooks:
                await hook()
        except StateUnavailable as exc:
            logger.debug("state store still degraded: %s", exc)
            return
        if not self._degraded:
            return
        self._degraded = False
        logger.warning("state store back on Redis after an outage")
        if self._metrics is not None:
            self._metrics.set_state_degraded(False)

    def _switch_to_fallback(self, reason: StateUnavailable) -> None:
        if self._degraded:
            return
        self._degraded = True
        self._last_probe = self._clock()
        logger.warning("state store degraded to in-process memory: %s", reason)
        if self._metrics is not None:
            self._metrics.set_state_degraded(True)


class _Failover:
    """Every async method of the primary, falling back to the same method of the fallback."""

    def __init__(self, switch: BackendSwitch, primary: Any, fallback: Any) -> None:
        self._switch = switch
        self._primary = primary
        self._fallback = fallback

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        on_primary, on_fallback = getattr(self._primary, name), getattr(self._fallback, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self._switch.call(lambda: on_primary(*args, **kwargs), lambda: on_fallback(*args, **kwargs))

        return call


def with_failover(switch: BackendSwitch, primary: P, fallback: P) -> P:
    """`primary` while Redis is up, `fallback` while the switch is degraded; both implement the protocol P."""
    return cast(P, _Failover(switch, primary, fallback))


class WriteThroughClaims:
    """Claims on Redis, mirrored in process; claims taken in process during an outage go to Redis on recovery.

    The mirror also answers first, so a retry this replica has already seen is a duplicate even when Redis lost
    the claim (restarted empty). What another replica claimed while Redis was down only Slack itself can tell
    (the adapter reads the thread before answering a retry).
    """

    def __init__(self, switch: BackendSwitch, primary: EventClaims, local: MemoryClaims) -> None:
        self._switch = switch
        self._primary = primary
        self._local = local
        self._unwritten: list[str] = []  # claims taken while degraded, oldest first
        switch.on_recovery(self._write_through)

    async def claim(self, key: str, ttl_s: float) -> bool:
        if not await self._local.claim(key, ttl_s):
            return False

        async def on_fallback() -> bool:
            self._unwritten.append(key)
            return True

        return await self._switch.call(lambda: self._primary.claim(key, ttl_s), on_fallback)

    async def _write_through(self) -> None:
        written = 0
        while self._unwritten:  # claims taken while this runs join the list and are written too
            key = self._unwritten[0]
            remaining_s = self._local.remaining_s(key)
            if remaining_s > 0:
                await self._primary.claim(key, remaining_s)  # False: another replica has it too; fine
                written += 1
            self._unwritten.pop(0)
        if written:
            logger.info("wrote %d claims taken during the Redis outage through to Redis", written)


__all__ = ["BackendSwitch", "WriteThroughClaims", "with_failover"]
