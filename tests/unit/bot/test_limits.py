from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from bot.config import Settings
from bot.limits import AnswerQueue, LimitsConfig
from bot.metrics import Metrics


async def next_position(positions) -> int:
    return await asyncio.wait_for(anext(positions), timeout=5)


class TestAnswerQueue:
    def test_free_slots_admit_at_once_and_a_full_queue_refuses(self):
        queue = AnswerQueue(max_active=1, max_waiting=1)
        first, second = queue.try_enter(), queue.try_enter()
        assert (first.admitted, second.position) == (True, 1)
        assert queue.try_enter() is None

    async def test_positions_move_up_as_turns_ahead_finish(self):
        queue = AnswerQueue(max_active=1, max_waiting=3)
        running = queue.try_enter()
        second, third = queue.try_enter(), queue.try_enter()
        positions = third.positions()
        assert await next_position(positions) == 2
        second.release()  # gave up while waiting
        assert await next_position(positions) == 1
        running.release()
        with pytest.raises(StopAsyncIteration):
            await next_position(positions)
        assert third.admitted
        assert (queue.active, queue.waiting) == (1, 0)

    def test_slot_goes_to_the_oldest_waiter_before_a_newcomer(self):
        queue = AnswerQueue(max_active=1, max_waiting=2)
        running, waiting = queue.try_enter(), queue.try_enter()
        running.release()
        assert waiting.admitted
        newcomer = queue.try_enter()
        assert (newcomer.admitted, newcomer.position) == (False, 1)

    def test_release_twice_frees_one_slot(self):
        metrics = Metrics()
        queue = AnswerQueue(max_active=2, max_waiting=0, metrics=metrics)
        ticket = queue.try_enter()
        queue.try_enter()
        ticket.release()
        ticket.release()
        assert queue.active == 1
        assert metrics.value("regbot_active_answers") == 1


class TestLimitsConfig:
    def test_from_settings_takes_question_length_and_deadline(self):
        settings = Settings(REGBOT_MAX_QUESTION_CHARS=500, REGBOT_ANSWER_DEADLINE_S=20)
        limits = LimitsConfig.from_settings(settings, user_burst=3)
        assert (limits.max_question_chars, limits.answer_deadline_s, limits.user_burst) == (500, 20.0, 3)

    def test_zero_answer_slots_is_rejected(self):
        with pytest.raises(ValidationError):
            LimitsConfig(max_active_answers=0)
