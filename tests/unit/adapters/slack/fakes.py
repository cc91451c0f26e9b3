"""A recording stand-in for the AsyncWebClient methods the Slack adapter calls (no network)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.slack_response import SlackResponse


def slack_error(code: str, *, status: int = 200) -> SlackApiError:
    response = SlackResponse(
        client=None,
        http_verb="POST",
        api_url="http://slack.test/api/",
        req_args={},
        data={"ok": False, "error": code},
        headers={},
        status_code=status,
    )
    return SlackApiError(message=code, response=response)


@dataclass
class RecordingClient:
    """Records (method, kwargs); `errors[method]` holds errors to raise on the next calls."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: dict[str, list[SlackApiError]] = field(default_factory=dict)
    replies: list[dict[str, Any]] = field(default_factory=list)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(100))

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def args(self, method: str) -> list[dict[str, Any]]:
        return [kwargs for m, kwargs in self.calls if m == method]

    def _record(self, method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((method, kwargs))
        pending = self.errors.get(method)
        if pending:
            raise pending.pop(0)
        return {"ok": True, "ts": f"1700000000.{next(self._ts):06d}"}

    async def chat_postMessage(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("chat.postMessage", kwargs)

    async def chat_update(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("chat.update", kwargs)

    async def chat_startStream(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("chat.startStream", kwargs)

    async def chat_appendStream(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("chat.appendStream", kwargs)

    async def chat_stopStream(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("chat.stopStream", kwargs)

    async def assistant_threads_setStatus(self, **kwargs: Any) -> dict[str, Any]:
        return self._record("assistant.threads.setStatus", kwargs)

    async def conversations_replies(self, **kwargs: Any) -> dict[str, Any]:
        self._record("conversations.replies", kwargs)
        return {"ok": True, "messages": self.replies}


class ManualClock:
    """Monotonic seconds that move only when the test says so, and a `sleep` that waits for them."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for deadline, woken in self._sleepers:
            if deadline <= self.now and not woken.done():
                woken.set_result(None)

    @property
    def overdue(self) -> int:
        """Sleepers whose time has come but who have not resumed yet."""
        return sum(1 for deadline, _ in self._sleepers if deadline <= self.now)

    @property
    def sleeping(self) -> int:
        return len(self._sleepers)

    async def sleep(self, seconds: float) -> None:
        sleeper = (self.now + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(sleeper)
        try:
            if seconds <= 0:
                sleeper[1].set_result(None)
            await sleeper[1]
        finally:
            self._sleepers.remove(sleeper)

