"""Test doubles for the Teams renderers: a recording ActivitySender and a controllable clock."""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from adapters.teams.delivery import ConnectorCallFailed
from rag.models import AnswerEvent


class FakeClock:
    """Monotonic time that only moves when told to (or when something sleeps)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(frozen=True)
class Call:
    method: str  # "send" | "update"
    activity_id: str  # the id returned (send) or edited (update)
    activity: dict[str, Any]
    at: float = 0.0  # the fake clock's time of the call

    @property
    def type(self) -> str:
        return self.activity["type"]

    @property
    def text(self) -> str:
        return self.activity.get("text", "")

    @property
    def stream_info(self) -> dict[str, Any] | None:
        return next((e for e in self.activity.get("entities", []) if e["type"] == "streaminfo"), None)

    @property
    def ai_entity(self) -> dict[str, Any] | None:
        return next((e for e in self.activity.get("entities", []) if e["type"] == "https://schema.org/Message"), None)


@dataclass
class FakeSender:
    """Records sends and edits; answers like the connector (a stream's later updates return no id)."""

    clock: FakeClock | None = None
    calls: list[Call] = field(default_factory=list)
    refused: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _failures: list[tuple[Callable[[str, dict[str, Any]], bool], ConnectorCallFailed, list[int]]] = field(
        default_factory=list
    )
    _ids: Iterable[int] = field(default_factory=lambda: itertools.count(1))

    def fail(
        self,
        error: ConnectorCallFailed,
        *,
        matches: Callable[[str, dict[str, Any]], bool] = lambda method, activity: True,
        times: int = 1,
    ) -> None:
        self._failures.append((matches, error, [times]))

    def _maybe_fail(self, method: str, activity: dict[str, Any]) -> None:
        for matches, error, remaining in self._failures:
            if remaining[0] > 0 and matches(method, activity):
                remaining[0] -= 1
                self.refused.append((method, activity))
                raise error

    async def send(self, activity: dict[str, Any]) -> str:
        self._maybe_fail("send", activity)
        stream = next((e for e in activity.get("entities", []) if e["type"] == "streaminfo"), None)
        activity_id = (
            "" if stream and stream.get("streamId") and activity["type"] == "typing" else f"id-{next(self._ids)}"
        )
        self.calls.append(Call("send", activity_id, activity, self._now()))
        return activity_id

    async def update(self, activity_id: str, activity: dict[str, Any]) -> None:
        self._maybe_fail("update", activity)
        self.calls.append(Call("update", activity_id, activity, self._now()))

    def _now(self) -> float:
        return self.clock.monotonic() if self.clock else 0.0

    def of_type(self, activity_type: str) -> list[Call]:
        return [c for c in self.calls if c.type == activity_type]


class ScriptedEvents:
    """An answer-event source that advances the clock before each event and notes how it was left.

    `stream()` is what a renderer consumes (an async generator, like `TurnService.answer`).
    """

    def __init__(
        self,
        events: list[AnswerEvent],
        *,
        clock: FakeClock | None = None,
        step_s: float = 0.0,
        fail_at: int | None = None,
    ) -> None:
        self._events = events
        self._clock = clock
        self._step_s = step_s
        self._fail_at = fail_at
        self.finished = False  # ran past its last event (a service saves history there)
        self.closed = False

    async def stream(self) -> AsyncGenerator[AnswerEvent, None]:
        try:
            for position, event in enumerate(self._events):
                if position == self._fail_at:
                    raise RuntimeError("the pipeline broke")
                if self._clock is not None:
                    self._clock.advance(self._step_s)
                yield event
            self.finished = True
        finally:
            self.closed = True
