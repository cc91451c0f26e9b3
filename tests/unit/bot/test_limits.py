from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from bot.config import Settings
from bot.service.limits import AnswerQueue, LimitsConfig
from bot.service.metrics import Metrics


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
    def test_every_limit_is_set_by_its_environment_variable(self, monkeypatch):
        env = {
            "REGBOT_MAX_QUESTION_CHARS": "500", "REGBOT_USER_BURST": "2", "REGBOT_USER_PER_MIN": "3",
            "REGBOT_CHANNEL_BURST": "4", "REGBOT_CHANNEL_PER_MIN": "5", "REGBOT_WORKSPACE_BURST": "6",
            "REGBOT_WORKSPACE_PER_MIN": "7", "REGBOT_RATE_WAIT_MAX_S": "8", "REGBOT_MAX_ACTIVE_ANSWERS": "9",
            "REGBOT_MAX_WAITING_ANSWERS": "10",
        }  # fmt: skip
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        limits = LimitsConfig.from_settings(Settings())
        assert limits.model_dump(exclude={"lock_ttl_s", "lock_wait_s"}) == {
            "max_question_chars": 500, "user_burst": 2, "user_refill_per_min": 3.0, "channel_burst": 4,
            "channel_refill_per_min": 5.0, "workspace_burst": 6, "workspace_refill_per_min": 7.0,
            "rate_wait_max_s": 8.0, "max_active_answers": 9, "max_waiting_answers": 10,
        }  # fmt: skip

    def test_overrides_win_over_settings(self):
        limits = LimitsConfig.from_settings(Settings(REGBOT_USER_BURST=1), user_burst=3)
        assert limits.user_burst == 3

    def test_zero_answer_slots_is_rejected(self):
        with pytest.raises(ValidationError):
            LimitsConfig(max_active_answers=0)
