from __future__ import annotations

import asyncio
import uuid

from bot.service.service import BotService
from rag import messages
from rag.models import AnswerEvent, AnswerEventKind, Turn
from tests.polling import wait_until

THREAD = "slack:T01:C01:1712345678.000100"


def make_turn(text: str, *, key: str = THREAD, user: str = "U01") -> Turn:
    return Turn(turn_id=uuid.uuid4().hex[:8], text=text, user=user, conversation_key=key)


async def collect(service: BotService, turn: Turn) -> list[AnswerEvent]:
    return [event async for event in service.answer(turn)]


class TestTwoReplicasSharingRedis:
    async def test_the_same_event_is_claimed_by_exactly_one_replica(self, make_replica):
        first, _ = make_replica()
        second, _ = make_replica()
        results = await asyncio.gather(*(service.claim_event("slack:event:Ev42") for service in (first, second) * 3))
        assert results.count(True) == 1

    async def test_a_thread_is_answered_by_one_replica_at_a_time(self, make_replica):
        first, first_pipeline = make_replica()
        second, second_pipeline = make_replica()
        gate = first_pipeline.hold("첫 질문")
        log: list[tuple[str, AnswerEventKind]] = []

        async def ask(service: BotService, text: str) -> None:
            async for event in service.answer(make_turn(text)):
                log.append((text, event.kind))

        on_first = asyncio.create_task(ask(first, "첫 질문"))
        await wait_until(lambda: ("첫 질문", AnswerEventKind.DELTA) in log, timeout_s=10)
        on_second = asyncio.create_task(ask(second, "둘째 질문"))
        await wait_until(lambda: second.locks.waiting(THREAD) == 1, timeout_s=10)
        gate.set()
        await asyncio.gather(on_first, on_second)

        assert [text for text, _ in log] == ["첫 질문"] * 4 + ["둘째 질문"] * 4  # status, 2 deltas, done
        # The second replica read the first replica's exchange from Redis.
        assert [m.content for m in second_pipeline.turns[0].history] == ["첫 질문", "첫 질문 답변"]

    async def test_rate_limit_is_shared_by_replicas(self, make_replica):
        first, _ = make_replica(user_burst=2, user_refill_per_min=6)
        second, _ = make_replica(user_burst=2, user_refill_per_min=6)
        await collect(first, make_turn("질문 하나", key="slack:T01:C01:1.0"))
        await collect(second, make_turn("질문 둘", key="slack:T01:C01:2.0"))
        limited = await collect(first, make_turn("질문 셋", key="slack:T01:C01:3.0"))
        assert len(limited) == 1
        assert limited[0].text.startswith(messages.RATE_LIMITED.split("{seconds}")[0])
        assert limited[0].text.endswith("초 뒤에 다시 물어봐 주세요.")
