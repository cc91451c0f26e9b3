"""Pacing the status lines of one answer (thinking, queue position, searching …) to what Slack tolerates.

The service emits a status every time an answer's queue position changes, which under load is several a
second per answer; each one shown is a Web API call (`assistant.threads.setStatus` or `chat.update`).
`StatusThrottle` sends the first line at once and then at most one per interval, always the newest:
lines that arrive within the interval replace each other and the last one is sent when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

# setStatus and chat.update are Tier 3 (~50/min per workspace); a position older than 2 s is still useful.
STATUS_INTERVAL_S = 2.0

Sleep = Callable[[float], Awaitable[None]]


class StatusThrottle:
    """Sends one answer's status lines: the first at once, then at most one per `interval_s`, the newest.

    Args:
        send: shows a line in Slack; it must not raise for Slack's refusals (they are logged by the writer).
        interval_s: the least time between two sends.
        clock: monotonic seconds.
        sleep: waits that many seconds of `clock` (injected with the clock in tests).
    """

    def __init__(
        self,
        send: Callable[[str], Awaitable[None]],
        *,
        interval_s: float = STATUS_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._send = send
        self._interval_s = interval_s
        self._clock = clock
        self._sleep = sleep
        self._last_sent = -math.inf
        self._waiting: str | None = None  # the newest line held back until the interval ends
        self._timer: asyncio.Task[None] | None = None  # sleeping until the interval ends
        self._sending: set[asyncio.Task[None]] = set()  # strong references while a late line is sent
        self._stopped = False

    async def offer(self, text: str) -> None:
        """Show `text` now if the interval has passed, else when it ends (unless a newer line replaces it)."""
        if self._stopped:
            return
        now = self._clock()
        wait_s = self._last_sent + self._interval_s - now
        if wait_s <= 0 and self._timer is None:
            self._last_sent = now
            await self._send(text)
            return
        self._waiting = text
        if self._timer is None:
            self._timer = asyncio.create_task(self._send_when_due(now + wait_s))
            self._sending.add(self._timer)
            self._timer.add_done_callback(self._sending.discard)

    def stop(self) -> None:
        """Send nothing more: answer text is on its way. A line already being sent is let finish."""
        self._stopped = True
        self._waiting = None
        if self._timer is not None:
            self._timer.cancel()  # only while it sleeps: a Web API call cut off could leave an unknown placeholder

    async def _send_when_due(self, due: float) -> None:
        try:
            await self._sleep(max(due - self._clock(), 0.0))  # the task may start a little after it was made
        finally:
            self._timer = None  # from here on a new line starts a new timer instead of joining this one
        text, self._waiting = self._waiting, None
        if text is None or self._stopped:
            return
        self._last_sent = self._clock()
        try:
            await self._send(text)
        except Exception:  # nobody awaits this task, and a status line is disposable: log and go on
            logger.warning("slack status line not shown", exc_info=True)


__all__ = ["STATUS_INTERVAL_S", "Sleep", "StatusThrottle"]
