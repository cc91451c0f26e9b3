"""Graceful shutdown of `regbot serve`: stop taking events, finish the answers in flight (bounded), then close.

On SIGTERM `web.run_app` stops listening, runs the `on_shutdown` hooks, waits for running HTTP handlers and
runs `on_cleanup`. The HTTP handlers are not the answers: adapters acknowledge an event at once and answer in
a background task. `GracefulShutdown`, installed first in `on_shutdown`, closes the gap:

1. intake stops: adapters with a `stop_intake()` (Slack Socket Mode) disconnect, the platform routes answer
   503 before any dedupe claim (so Slack redelivers the event to another replica) and `/readyz` answers 503;
2. it waits until no answer is in flight, or `drain_timeout_s` passes;
3. the server's own hook then closes the adapters (they cancel what is left) and the state store.

    shutdown = GracefulShutdown.for_runtime(runtime)   # in create_app, before `return app`
    shutdown.install(app)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from aiohttp import web
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from bot.server.runtime import Runtime

logger = logging.getLogger(__name__)

# Where platforms deliver events (DESIGN.md §3 routes).
INTAKE_PATHS = frozenset({"/slack/events", "/api/messages", "/api/playground/ask"})
READINESS_PATH = "/readyz"
DEFAULT_DRAIN_TIMEOUT_S = 25.0


@runtime_checkable
class IntakeStopper(Protocol):
    """An adapter that receives events other than over our HTTP routes (Socket Mode) and can stop that."""

    async def stop_intake(self) -> None: ...


class DrainReport(BaseModel):
    """How the drain ended: `drained` is False when answers were still running at the deadline."""

    model_config = ConfigDict(frozen=True)

    drained: bool
    waited_s: float
    in_flight_at_start: int
    in_flight_left: int


class GracefulShutdown:
    """Stops intake, then waits up to `drain_timeout_s` for the answers in flight to finish.

    Args:
        in_flight: how many answers are running or queued in this process right now.
        intake_stoppers: adapters to disconnect first (anything with an async `stop_intake()`).
        drain_timeout_s: the longest the drain waits; keep it below the orchestrator's grace period
            minus the adapters' own close grace.
        poll_s: how often the drain looks at `in_flight`.
        clock: monotonic seconds.
    """

    def __init__(
        self,
        *,
        in_flight: Callable[[], int],
        intake_stoppers: Iterable[object] = (),
        drain_timeout_s: float = DEFAULT_DRAIN_TIMEOUT_S,
        poll_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if drain_timeout_s < 0 or poll_s <= 0:
            raise ValueError("drain_timeout_s must be at least 0 and poll_s positive")
        self._in_flight = in_flight
        self._intake_stoppers = intake_stoppers  # read at drain time: adapters attach after construction
        self._drain_timeout_s = drain_timeout_s
        self._poll_s = poll_s
        self._clock = clock
        self._draining = False
        self._report: DrainReport | None = None

    @classmethod
    def for_runtime(cls, runtime: Runtime, *, drain_timeout_s: float = DEFAULT_DRAIN_TIMEOUT_S) -> GracefulShutdown:
        """Counts the service's active and queued answers; stops the intake of the runtime's adapters."""
        queue = runtime.service.queue
        return cls(
            in_flight=lambda: queue.active + queue.waiting,
            intake_stoppers=runtime.adapters,
            drain_timeout_s=drain_timeout_s,
        )

    @property
    def draining(self) -> bool:
        return self._draining

    @property
    def report(self) -> DrainReport | None:
        """The outcome of the drain, once it ran."""
        return self._report

    def install(self, app: web.Application) -> None:
        """Add the intake gate and make the drain the first `on_shutdown` hook; call before the app starts."""
        app.middlewares.append(self._gate)
        app.on_shutdown.insert(0, self._on_shutdown)

    async def drain(self) -> DrainReport:
        """Stop intake and wait for the answers in flight; safe to call twice (the second returns at once)."""
        if self._report is not None:
            return self._report
        self._draining = True
        started = self._clock()
        at_start = self._in_flight()
        # Warnings only when answers are at stake: a Ctrl-C on an idle server is not a problem to report.
        logger.log(logging.WARNING if at_start else logging.INFO,
                   "shutting down: intake stopped, %d answer(s) in flight", at_start)
        for adapter in self._intake_stoppers:
            if isinstance(adapter, IntakeStopper):
                try:
                    await adapter.stop_intake()
                except Exception:  # one adapter failing to disconnect must not keep the others open
                    logger.exception("stopping the intake of %s failed", type(adapter).__name__)
        deadline = started + self._drain_timeout_s
        left = self._in_flight()
        while left and self._clock() < deadline:
            await asyncio.sleep(self._poll_s)
            left = self._in_flight()
        waited_s = self._clock() - started
        self._report = DrainReport(drained=not left, waited_s=round(waited_s, 3), in_flight_at_start=at_start,
                                   in_flight_left=left)
        if left:
            logger.warning("drain deadline (%.0f s) passed with %d answer(s) running; they will be cancelled",
                           self._drain_timeout_s, left)
        elif at_start:
            logger.warning("drained in %.1f s", waited_s)
        return self._report

    async def _on_shutdown(self, _: web.Application) -> None:
        await self.drain()

    @web.middleware
    async def _gate(self, request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if self._draining:
            if request.path in INTAKE_PATHS:
                # Refused before the adapter claims the event, so the platform's retry can go to another replica.
                return web.json_response({"error": "shutting down"}, status=503, headers={"Retry-After": "1"})
            if request.path == READINESS_PATH:
                return web.json_response({"ready": False, "checks": {"shutdown": "draining"}}, status=503)
        return await handler(request)


__all__ = ["DEFAULT_DRAIN_TIMEOUT_S", "INTAKE_PATHS", "DrainReport", "GracefulShutdown", "IntakeStopper"]
