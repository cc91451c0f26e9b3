"""Status lines of one answer: the first at once, then at most one per interval, always the newest."""

from __future__ import annotations

import pytest

from adapters.slack.status import StatusThrottle
from rag import messages
from tests.polling import wait_until
from tests.unit.adapters.slack.fakes import ManualClock


def queued(position: int) -> str:
    return messages.STATUS_QUEUED.format(position=position)


def throttle_with(clock: ManualClock, sent: list[str], *, interval_s: float = 2.0) -> StatusThrottle:
    async def send(text: str) -> None:
        sent.append(text)

    return StatusThrottle(send, interval_s=interval_s, clock=clock, sleep=clock.sleep)


class TestStatusThrottle:
    async def test_first_line_is_sent_at_once(self):
        clock, sent = ManualClock(), []
        throttle = throttle_with(clock, sent)

        await throttle.offer(messages.STATUS_UNDERSTANDING)

        assert sent == [messages.STATUS_UNDERSTANDING]
        assert clock.sleeping == 0

    async def test_lines_within_the_interval_collapse_into_the_newest_sent_when_it_ends(self):
        clock, sent = ManualClock(), []
        throttle = throttle_with(clock, sent)
        await throttle.offer(messages.STATUS_UNDERSTANDING)
        clock.advance(0.5)
        for position in (3, 2, 1):
            await throttle.offer(queued(position))
        assert sent == [messages.STATUS_UNDERSTANDING]

        clock.advance(1.5)

        await wait_until(lambda: len(sent) == 2)
        assert sent == [messages.STATUS_UNDERSTANDING, queued(1)]

    async def test_line_after_a_quiet_interval_is_not_delayed(self):
        clock, sent = ManualClock(), []
        throttle = throttle_with(clock, sent)
        await throttle.offer(messages.STATUS_UNDERSTANDING)
        clock.advance(3.0)

        await throttle.offer(messages.STATUS_SEARCHING)

        assert sent == [messages.STATUS_UNDERSTANDING, messages.STATUS_SEARCHING]
        assert clock.sleeping == 0

    async def test_queue_position_changing_four_times_a_second_costs_one_call_per_interval(self):
        clock, sent = ManualClock(), []
        throttle = throttle_with(clock, sent)
        await throttle.offer(messages.STATUS_UNDERSTANDING)

        for position in range(16, 0, -1):  # 16 positions over 4 s
            clock.advance(0.25)
            await wait_until(lambda: clock.overdue == 0)  # a line due now has gone out
            await throttle.offer(queued(position))
            await wait_until(lambda: clock.sleeping == 1)  # the newest line waits for its turn
        clock.advance(2.0)
        await wait_until(lambda: len(sent) == 4)

        # t=0; at t=2 and t=4 the newest line before them; the last line when its own interval ends.
        assert sent == [messages.STATUS_UNDERSTANDING, queued(10), queued(2), queued(1)]

    async def test_stop_drops_the_waiting_line(self):
        clock, sent = ManualClock(), []
        throttle = throttle_with(clock, sent)
        await throttle.offer(messages.STATUS_UNDERSTANDING)
        await throttle.offer(messages.STATUS_SEARCHING)

        throttle.stop()
        clock.advance(5.0)
        await wait_until(lambda: clock.sleeping == 0)
        await throttle.offer(messages.STATUS_WRITING)

        assert sent == [messages.STATUS_UNDERSTANDING]

    async def test_failed_late_line_does_not_stop_later_ones(self):
        clock, sent = ManualClock(), []

        async def flaky_send(text: str) -> None:
            sent.append(text)
            if text == messages.STATUS_SEARCHING:
                raise ConnectionError("socket closed")

        throttle = StatusThrottle(flaky_send, interval_s=2.0, clock=clock, sleep=clock.sleep)
        await throttle.offer(messages.STATUS_UNDERSTANDING)
        await throttle.offer(messages.STATUS_SEARCHING)
        clock.advance(2.0)
        await wait_until(lambda: len(sent) == 2)
        clock.advance(2.0)

        await throttle.offer(messages.STATUS_WRITING)

        assert sent == [messages.STATUS_UNDERSTANDING, messages.STATUS_SEARCHING, messages.STATUS_WRITING]

    def test_interval_must_be_positive(self):
        async def send(text: str) -> None: ...

        with pytest.raises(ValueError, match="positive"):
            StatusThrottle(send, interval_s=0)
