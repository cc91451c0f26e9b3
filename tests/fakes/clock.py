"""Time that tests control: a clock that moves only when told, and a stand-in for `asyncio.sleep`."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Seconds (monotonic or epoch, as the caller reads them) that move only by `advance` or by setting `now`."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class RecordedSleeps:
    """Stands in for asyncio.sleep: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay_s: float) -> None:
        self.delays.append(delay_s)


class AdvancingSleeps(RecordedSleeps):
    """Stands in for asyncio.sleep with a FakeClock: the clock moves by the delay, other tasks get a turn."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self._clock = clock

    async def __call__(self, delay_s: float) -> None:
        await super().__call__(delay_s)
        self._clock.advance(delay_s)
        await asyncio.sleep(0)


__all__ = ["AdvancingSleeps", "FakeClock", "RecordedSleeps"]
