from __future__ import annotations

import asyncio
import logging
import unicodedata
import uuid
from collections.abc import AsyncIterator

import pytest

from adapters.base import Feedback, ScopeRequest
from bot.report.recorder import TurnRecorder
from bot.report.records import SqliteRecordStore
from bot.service.metrics import Metrics
from bot.service.scopes import ScopeResolver, ScopeRules
from bot.service.service import BotService
from bot.state import StateStores
from rag import messages
from rag.models import AnswerEvent, AnswerEventKind, Message, Role, Scope, Turn
from tests.polling import wait_until

THREAD = "slack:T01:C01:1712345678.000100"


def make_turn(text: str, *, key: str = THREAD, user: str = "U01", history: tuple[Message, ...] = ()) -> Turn:
    return Turn(turn_id=f"turn-{uuid.uuid4().hex[:8]}", text=text, user=user, conversation_key=key, history=history)


async def collect(service: BotService, turn: Turn) -> list[AnswerEvent]:
    return [event async for event in service.answer(turn)]


def answer_text(events: list[AnswerEvent]) -> str:
    return "".join(event.text for event in events if event.kind == AnswerEventKind.DELTA)


class TestInputChecks:
    async def test_blank_question_gets_the_empty_question_message(self, make_service, pipeline):
        events = await collect(make_service(), make_turn(" \n\u200b "))
        assert [(e.kind, e.text) for e in events] == [(AnswerEventKind.ERROR, messages.EMPTY_QUESTION)]
        assert pipeline.turns == []

    async def test_emoji_only_question_asks_for_words(self, make_service, pipeline):
        events = await collect(make_service(), make_turn("👍🙏 ?!"))
        assert [e.text for e in events] == [messages.NO_TEXT_QUESTION]
        assert pipeline.turns == []

    async def test_huge_question_names_its_length_and_the_limit(self, make_service, pipeline):
        events = await collect(make_service(max_question_chars=100), make_turn("연차" * 1000))
        assert [e.text for e in events] == ["질문이 너무 길어요(2,000자). 100자 이내로 핵심만 적어 주세요."]
        assert pipeline.turns == []

    async def test_nfd_question_reaches_the_pipeline_as_nfc(self, make_service, pipeline):
        await collect(make_service(), make_turn(unicodedata.normalize("NFD", "  연차는 며칠이야?  ")))
        assert pipeline.turns[0].text == "연차는 며칠이야?"


class TestAnswering:
    async def test_events_are_relayed_and_end_with_done(self, make_service):
        events = await collect(make_service(), make_turn("연차는 며칠이야?"))
        assert [e.kind for e in events] == [
            AnswerEventKind.STATUS,
            AnswerEventKind.DELTA,
            AnswerEventKind.DELTA,
            AnswerEventKind.DONE,
        ]
        assert answer_text(events) == "연차는 며칠이야? 답변"

    async def test_history_is_saved_after_done_and_used_on_the_next_turn(self, make_service, pipeline):
        service = make_service()
        await collect(service, make_turn("연차는 며칠이야?"))
        await collect(service, make_turn("반차도 돼?"))
        assert pipeline.turns[1].history == (
            Message(role=Role.USER, content="연차는 며칠이야?"),
            Message(role=Role.ASSISTANT, content="연차는 며칠이야? 답변"),
        )
        assert await service.has_history(THREAD)
        assert [m.content for m in await service.history(THREAD)][-1] == "반차도 돼? 답변"

    async def test_history_rebuilt_by_the_adapter_is_stored_with_the_new_exchange(self, make_service):
        service = make_service()
        rebuilt = (
            Message(role=Role.USER, content="출장비 규정 알려줘"),
            Message(role=Role.ASSISTANT, content="출장비는 실비로 정산해요."),
        )
        await collect(service, make_turn("숙박비 한도는?", history=rebuilt))
        assert [m.content for m in await service.history(THREAD)] == [
            "출장비 규정 알려줘",
            "출장비는 실비로 정산해요.",
            "숙박비 한도는?",
            "숙박비 한도는? 답변",
        ]

    async def test_pipeline_error_event_is_relayed_and_not_saved(self, make_service, store):
        class FailingPipeline:
            async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
                yield AnswerEvent.error(messages.INDEX_UNAVAILABLE)

        service = make_service()
        service._pipeline = FailingPipeline()
        events = await collect(service, make_turn("연차는 며칠이야?"))
        assert [e.text for e in events] == [messages.INDEX_UNAVAILABLE]
        assert await store.history.load(THREAD) == []

    async def test_exception_in_pipeline_becomes_internal_error_without_logging_the_question(
        self, make_service, caplog
    ):
        class BrokenPipeline:
            async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
                yield AnswerEvent.delta("부분 답")
                raise RuntimeError("stage exploded")

        service = make_service()
        service._pipeline = BrokenPipeline()
        with caplog.at_level(logging.INFO, logger="bot.service.service"):
            events = await collect(service, make_turn("비밀 인사 질문"))
        assert [(e.kind, e.text) for e in events] == [
            (AnswerEventKind.DELTA, "부분 답"),
            (AnswerEventKind.ERROR, messages.INTERNAL_ERROR),
        ]
        assert "비밀 인사 질문" not in caplog.text
        assert "outcome=error" in caplog.text
        # The lock and the answer slot were released: the thread answers again.
        service._pipeline = make_service()._pipeline
        again = await collect(service, make_turn("다시 물어볼게"))
        assert again[-1].kind == AnswerEventKind.DONE

    async def test_adapter_that_stops_reading_releases_the_thread_and_the_slot(self, make_service):
        service = make_service(max_active_answers=1)
        events = service.answer(make_turn("중간에 끊긴 질문"))
        async for event in events:
            if event.kind == AnswerEventKind.DELTA:
                break
        await events.aclose()
        assert (service.queue.active, service.locks.waiting(THREAD)) == (0, 0)
        again = await collect(service, make_turn("다시 물어볼게"))
        assert again[-1].kind == AnswerEventKind.DONE

    async def test_pipeline_timeout_is_relayed_and_counted_as_a_timeout(self, make_service, metrics: Metrics):
        class SlowPipeline:  # the pipeline owns the answer deadline and reports it as an error event
            async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
                yield AnswerEvent.delta("부분 답")
                yield AnswerEvent.error(f"{messages.STREAM_INTERRUPTED}\n{messages.TIMEOUT}")

        service = make_service()
        service._pipeline = SlowPipeline()
        events = await collect(service, make_turn("오래 걸리는 질문"))
        assert events[-1].text.endswith(messages.TIMEOUT)
        assert answer_text(events) == "부분 답"
        assert metrics.value("regbot_requests_total", {"platform": "slack", "outcome": "timeout"}) == 1

    async def test_turn_log_line_names_route_llm_calls_and_timings(self, make_service, caplog):
        with caplog.at_level(logging.INFO, logger="bot.service.service"):
            await collect(make_service(), make_turn("연차는 며칠이야?"))
        line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("turn "))
        assert "outcome=answered route=search llm_calls=2" in line
        assert '"generate": 900.0' in line
        assert "연차" not in line

    async def test_answered_turn_is_counted_in_metrics(self, make_service, metrics: Metrics):
        await collect(make_service(), make_turn("연차는 며칠이야?"))
        assert metrics.value("regbot_requests_total", {"platform": "slack", "outcome": "answered"}) == 1
        assert metrics.value("regbot_llm_calls_total", {"route": "search"}) == 2
        assert metrics.value("regbot_stage_latency_seconds_count", {"stage": "generate"}) == 1
        assert b'regbot_answer_latency_seconds_count{platform="slack",route="search"} 1.0' in metrics.render()


class TestConversationLock:
    async def test_two_questions_on_one_thread_are_answered_one_after_the_other(self, make_service, pipeline):
        service = make_service()
        gate = pipeline.hold("첫 질문")
        log: list[tuple[str, AnswerEventKind]] = []

        async def ask(text: str) -> None:
            async for event in service.answer(make_turn(text)):
                log.append((text, event.kind))

        first = asyncio.create_task(ask("첫 질문"))
        await wait_until(lambda: ("첫 질문", AnswerEventKind.DELTA) in log)
        second = asyncio.create_task(ask("둘째 질문"))
        await wait_until(lambda: service.locks.waiting(THREAD) == 1)
        gate.set()
        await asyncio.gather(first, second)

        assert [text for text, _ in log] == ["첫 질문"] * 4 + ["둘째 질문"] * 4
        assert log[3] == ("첫 질문", AnswerEventKind.DONE)
        assert [m.content for m in pipeline.turns[1].history] == ["첫 질문", "첫 질문 답변"]

    async def test_other_threads_are_not_blocked_by_a_busy_thread(self, make_service, pipeline):
        service = make_service()
        gate = pipeline.hold("느린 질문")
        slow = asyncio.create_task(collect(service, make_turn("느린 질문")))
        await wait_until(lambda: len(pipeline.turns) == 1)
        other = await collect(service, make_turn("다른 스레드 질문", key="slack:T01:C01:999.1"))
        assert other[-1].kind == AnswerEventKind.DONE
        gate.set()
        assert (await slow)[-1].kind == AnswerEventKind.DONE

    async def test_lock_left_by_a_crashed_replica_expires(self, make_service, store: StateStores, clock):
        service = make_service(lock_ttl_s=30)
        assert await store.locks.acquire(THREAD, 30) is not None  # held by a replica that died
        waiting = asyncio.create_task(collect(service, make_turn("연차는 며칠이야?")))
        await wait_until(lambda: service.locks.waiting(THREAD) == 1)
        clock.advance(31)
        events = await waiting
        assert events[-1].kind == AnswerEventKind.DONE


class TestQueueAndLimits:
    async def test_queued_turn_sees_its_position_and_a_full_queue_answers_busy(self, make_service, pipeline):
        service = make_service(max_active_answers=1, max_waiting_answers=1)
        gate = pipeline.hold("첫 질문")
        first = asyncio.create_task(collect(service, make_turn("첫 질문", key="slack:T01:C01:1.1")))
        await wait_until(lambda: len(pipeline.turns) == 1)

        queued_events: list[AnswerEvent] = []

        async def queued() -> None:
            async for event in service.answer(make_turn("둘째 질문", key="slack:T01:C01:2.2")):
                queued_events.append(event)

        second = asyncio.create_task(queued())
        await wait_until(lambda: len(queued_events) == 1)
        assert queued_events[0].text == "질문이 많아 잠시 대기 중이에요. 대기 순서: 1번째"

        third = await collect(service, make_turn("셋째 질문", key="slack:T01:C01:3.3"))
        assert [e.text for e in third] == [messages.BUSY]

        gate.set()
        await asyncio.gather(first, second)
        assert queued_events[-1].kind == AnswerEventKind.DONE
        assert service.queue.active == 0

    async def test_user_over_the_rate_limit_is_told_when_to_retry(self, make_service, clock):
        service = make_service(user_burst=2, user_refill_per_min=6)
        for n in range(2):
            events = await collect(service, make_turn(f"질문 {n}", key=f"slack:T01:C01:{n}.0"))
            assert events[-1].kind == AnswerEventKind.DONE
        limited = await collect(service, make_turn("세 번째 질문", key="slack:T01:C01:9.0"))
        assert [e.text for e in limited] == ["요청이 너무 많아요. 10초 뒤에 다시 물어봐 주세요."]
        # Another user of the same workspace is unaffected.
        other = await collect(service, make_turn("다른 사람 질문", key="slack:T01:C01:8.0", user="U02"))
        assert other[-1].kind == AnswerEventKind.DONE
        clock.advance(10)
        later = await collect(service, make_turn("세 번째 질문", key="slack:T01:C01:9.0"))
        assert later[-1].kind == AnswerEventKind.DONE

    async def test_workspace_burst_waits_in_line_for_its_token(self, make_service, sleeps):
        service = make_service(workspace_burst=1, workspace_refill_per_min=6, rate_wait_max_s=15)
        await collect(service, make_turn("질문 하나", user="U01"))
        waited = await collect(service, make_turn("질문 둘", user="U02", key="slack:T01:C01:5.5"))
        assert waited[0].text == messages.STATUS_QUEUED.format(position=1)
        assert waited[-1].kind == AnswerEventKind.DONE
        assert sum(sleeps.delays) == pytest.approx(10.0)  # the lent token was due 10 s later

    async def test_workspace_burst_longer_than_the_longest_wait_is_refused(self, make_service, sleeps):
        service = make_service(workspace_burst=1, workspace_refill_per_min=6, rate_wait_max_s=5)
        await collect(service, make_turn("질문 하나", user="U01"))
        refused = await collect(service, make_turn("질문 둘", user="U02", key="slack:T01:C01:5.5"))
        assert [e.text for e in refused] == ["요청이 너무 많아요. 10초 뒤에 다시 물어봐 주세요."]
        assert sleeps.delays == []

    async def test_a_hundred_questions_from_one_workspace_at_once_are_all_answered(self, make_service):
        service = make_service()  # the defaults `regbot serve` starts with
        turns = [make_turn(f"질문 {n}", key=f"slack:T01:C01:{n}.0", user=f"U{n:03d}") for n in range(100)]
        results = await asyncio.gather(*(collect(service, turn) for turn in turns))

        assert [events[-1].kind for events in results] == [AnswerEventKind.DONE] * 100
        shown = [event.text for events in results for event in events]
        assert messages.BUSY not in shown
        assert not any(text.startswith(messages.RATE_LIMITED.split("{")[0]) for text in shown)
        queued_prefix = messages.STATUS_QUEUED.split("{")[0]
        positions = [[e.text for e in events if e.text.startswith(queued_prefix)] for events in results]
        assert sum(1 for shown_to_one in positions if shown_to_one) >= 40  # every one past the burst waited
        assert max(len(shown_to_one) for shown_to_one in positions) > 1  # and its place in line was updated

    async def test_channel_bucket_is_shared_by_the_channel_only(self, make_service, sleeps):
        service = make_service(channel_burst=1, channel_refill_per_min=60, workspace_burst=0)
        await collect(service, make_turn("질문 하나", user="U01", key="slack:T01:C01:1.0"))
        other_channel = await collect(service, make_turn("질문 둘", user="U02", key="slack:T01:C02:2.0"))
        assert sleeps.delays == []
        same_channel = await collect(service, make_turn("질문 셋", user="U03", key="slack:T01:C01:3.0"))
        assert sleeps.delays == [pytest.approx(1.0)]
        assert other_channel[-1].kind == same_channel[-1].kind == AnswerEventKind.DONE


class TestTurnServiceOperations:
    async def test_second_claim_of_an_event_is_a_duplicate(self, make_service, metrics: Metrics):
        service = make_service()
        assert await service.claim_event("slack:event:Ev01") is True
        assert await service.claim_event("slack:event:Ev01") is False
        assert metrics.value("regbot_duplicate_events_total") == 1

    async def test_claim_expires_after_its_ttl(self, make_service, clock):
        service = make_service()
        assert await service.claim_event("slack:event:Ev02", ttl_s=60)
        clock.advance(61)
        assert await service.claim_event("slack:event:Ev02", ttl_s=60)

    async def test_a_vote_is_counted_and_kept_only_as_a_turn_record(self, pipeline, store, metrics: Metrics, clock,
                                                                     tmp_path):
        records = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(records, clock=clock)
        service = BotService(pipeline=pipeline, store=store, metrics=metrics, clock=clock, recorder=recorder)
        feedback = Feedback(platform="slack", conversation_key=THREAD, user="U01", rating="down",
                            question="연차는 며칠이야?", answer="15일이에요.", comment="틀렸어요", turn_id="t-1")
        await service.record_feedback(feedback)
        await recorder.close()

        [vote] = await SqliteRecordStore(tmp_path / "records.sqlite", create=False).feedback(0)
        assert (vote.rating, vote.turn_id, vote.comment) == ("down", "t-1", "")  # REGBOT_KEEP_QUESTIONS is off
        assert vote.user and vote.user != "U01"
        assert metrics.value("regbot_feedback_total", {"platform": "slack", "rating": "down"}) == 1
        assert not hasattr(store, "feedback")  # no second copy in state, outside the records' retention and purge

    async def test_scope_comes_from_the_resolver(self, pipeline, store, metrics, clock):
        rules = ScopeRules.model_validate({"slack": [{"workspace": "T01", "collections": ["hr"]}]})
        service = BotService(pipeline=pipeline, store=store, metrics=metrics, scopes=ScopeResolver(rules), clock=clock)
        scope = await service.scope_for(ScopeRequest(platform="slack", workspace="T01", channel="C01"))
        assert scope == Scope(collections=("hr",))


async def test_invalid_turn_is_counted_as_invalid(make_service, metrics: Metrics):
    events = await collect(make_service(), make_turn(""))
    assert [e.text for e in events] == [messages.EMPTY_QUESTION]
    assert metrics.value("regbot_requests_total", {"platform": "slack", "outcome": "invalid"}) == 1


async def test_no_raw_user_id_reaches_rate_buckets(make_service, store) -> None:
    service = make_service(user_burst=5)
    await collect(service, make_turn("연차 며칠이야?", user="U0RAWID123"))

    bucket_keys = " ".join(store.buckets._buckets)
    assert bucket_keys and "U0RAWID123" not in bucket_keys
