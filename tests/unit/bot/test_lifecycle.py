"""GracefulShutdown.drain: intake stops first, answers in flight are awaited, the wait is bounded."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from bot.server import lifecycle
from bot.server.lifecycle import GracefulShutdown
from tests.fakes.clock import FakeClock


class SocketModeAdapter:
    """Stands for an adapter that receives events over a socket; records when it was told to stop."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def stop_intake(self) -> None:
        self.log.append("intake stopped")


class BrokenAdapter:
    async def stop_intake(self) -> None:
        raise ConnectionError("socket already gone")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock(start=100.0)  # moves only when the drain sleeps

    async def advancing_sleep(delay: float, *args: object) -> None:
        fake.now += delay
        await asyncio.sleep(0)

    # Only bot.server.lifecycle sees the advancing sleep: patching `asyncio.sleep` itself would reach every task on the
    # session's event loop for the length of the test.
    monkeypatch.setattr(lifecycle, "asyncio", SimpleNamespace(**{**vars(asyncio), "sleep": advancing_sleep}))
    return fake


class TestDrain:
    async def test_returns_at_once_when_nothing_is_in_flight(self, clock):
        shutdown = GracefulShutdown(in_flight=lambda: 0, drain_timeout_s=10, clock=clock)

        report = await shutdown.drain()

        assert (report.drained, report.in_flight_at_start, report.waited_s) == (True, 0, 0.0)
        assert shutdown.draining

    async def test_waits_until_the_last_answer_finishes(self, clock):
        running = [3]

        def in_flight() -> int:
            running[0] = max(running[0] - 1, 0)  # one answer finishes per look
            return running[0]

        report = await GracefulShutdown(in_flight=in_flight, drain_timeout_s=10, poll_s=0.5, clock=clock).drain()

        assert report.drained
        assert report.in_flight_at_start == 2
        assert report.waited_s == 0.5  # one poll interval on the fake clock

    async def test_gives_up_at_the_deadline_and_says_how_many_were_left(self, clock):
        report = await GracefulShutdown(in_flight=lambda: 2, drain_timeout_s=3, poll_s=1, clock=clock).drain()

        assert not report.drained
        assert report.in_flight_left == 2
        assert report.waited_s == 3.0

    async def test_stops_socket_intake_before_waiting(self, clock):
        log: list[str] = []

        def in_flight() -> int:
            log.append("counted")
            return 0

        adapters = [object(), BrokenAdapter(), SocketModeAdapter(log)]
        await GracefulShutdown(in_flight=in_flight, intake_stoppers=adapters, clock=clock).drain()

        assert log == ["counted", "intake stopped", "counted"]

    async def test_second_drain_returns_the_first_report(self, clock):
        shutdown = GracefulShutdown(in_flight=lambda: 1, drain_timeout_s=1, poll_s=1, clock=clock)
        first = await shutdown.drain()

        assert await shutdown.drain() is first

    def test_rejects_a_negative_timeout(self):
        with pytest.raises(ValueError, match="drain_timeout_s"):
            GracefulShutdown(in_flight=lambda: 0, drain_timeout_s=-1)
