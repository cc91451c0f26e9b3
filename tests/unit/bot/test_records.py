"""Turn records: the outcome mapping, what a record keeps (and never keeps), and that writing never blocks a turn."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.base import Feedback
from bot.report.recorder import TurnRecorder
from bot.report.records import FeedbackRecord, SqliteRecordStore, TurnRecord, turn_outcome
from bot.report.themes import TopicNouns
from bot.service.service import BotService
from rag.models import Answer, Citation, Outcome, Route, Scope, Turn
from tests.fakes.clock import FakeClock

SECRET_QUESTION = "주차장 요금 김비밀 사원의 질문"
NOW = 1_700_000_000.0  # the `clock` fixture starts here


@dataclass
class _Token:
    form: str
    tag: str


class WhitespaceKiwi:
    """Stands in for Kiwi: every word is a common noun, except words starting with 김 (a name: NNP)."""

    def tokenize(self, text: str) -> list[_Token]:
        return [_Token(w, "NNP" if w.startswith("김") else "NNG") for w in text.split()]


def _answer(*, route: Route = Route.SEARCH, grounded: bool = True, cited: Sequence[tuple[str, str]] = ()) -> Answer:
    citations = tuple(Citation(index=i + 1, doc=d, article=a) for i, (d, a) in enumerate(cited))
    return Answer(text="답변 본문 " * 10, route=route, grounded=grounded, citations=citations, llm_calls=2)


def _turn(text: str = SECRET_QUESTION, turn_id: str = "t1", key: str = "slack:T0TEAM:C0RULES:1700.1") -> Turn:
    return Turn(turn_id=turn_id, text=text, user="U0SECRETUSER", conversation_key=key,
                scope=Scope(collections=("hr",)))


class FailingStore(SqliteRecordStore):
    """A store whose writes fail, as Redis does during an outage."""

    async def write(self, turns, feedback) -> None:
        raise ConnectionError("records store down")


class GatedStore(SqliteRecordStore):
    """A store whose writes wait for a gate: a slow disk or a stalled Redis."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = asyncio.Event()

    async def write(self, turns, feedback) -> None:
        await self.gate.wait()
        await super().write(turns, feedback)


class TestTurnOutcome:
    def test_error_event_and_internal_failure_are_both_error(self):
        assert turn_outcome("failed", None) == "error"
        assert turn_outcome("error", None) == "error"

    def test_service_outcomes_without_an_answer_keep_their_names(self):
        for outcome in ("rate_limited", "invalid", "busy", "timeout", "abandoned"):
            assert turn_outcome(outcome, None) == outcome

    def test_ungrounded_answer_is_not_covered(self):
        assert turn_outcome("answered", _answer(grounded=False)) == "not_covered"

    def test_a_hedged_answer_is_hedged_not_a_refusal(self):
        hedged = _answer(cited=[("근로기준법", "제26조")]).model_copy(update={"outcome": Outcome.HEDGED})
        assert turn_outcome("answered", hedged) == "hedged"

    def test_chitchat_is_small_talk_and_a_grounded_answer_is_answered(self):
        assert turn_outcome("answered", _answer(route=Route.CHITCHAT)) == "small_talk"
        assert turn_outcome("answered", _answer(cited=[("취업규칙", "제20조")])) == "answered"


class TestRecorderPrivacyDefault:
    async def test_record_keeps_no_text_no_raw_ids_and_only_common_nouns_of_a_refusal(
            self, tmp_path: Path, clock: FakeClock):
        store = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(store, topic_nouns=TopicNouns(WhitespaceKiwi()), clock=clock)

        recorder.turn_ended(_turn(), platform="slack", outcome="answered", answer=_answer(grounded=False),
                            latency_s=0.25, at=NOW)
        recorder.feedback_given(Feedback(platform="slack", conversation_key="slack:T0TEAM:C0RULES:1700.1",
                                         user="U0SECRETUSER", rating="down", question=SECRET_QUESTION,
                                         comment="김비밀 의견", turn_id="t1"), at=NOW + 5)
        await recorder.close()

        [record] = await SqliteRecordStore(store.path, create=False).turns(0)
        assert record.outcome == "not_covered"
        assert record.question == "" and record.answer == ""
        assert record.topic_nouns == ("사원의", "요금", "주차장")  # sorted; no name (NNP), no stop noun (질문)
        assert record.user and "U0SECRETUSER" not in record.user
        assert record.latency_ms == 250.0 and record.collections == ("hr",)
        data = store.path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("records.sqlite-*"))
        for secret in ("김비밀", SECRET_QUESTION, "U0SECRETUSER", "T0TEAM", "C0RULES", "답변 본문"):
            assert secret.encode() not in data

    async def test_answered_question_keeps_no_nouns(self, tmp_path: Path, clock: FakeClock):
        store = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(store, topic_nouns=TopicNouns(WhitespaceKiwi()), clock=clock)

        recorder.turn_ended(_turn("연차 며칠"), platform="slack", outcome="answered",
                            answer=_answer(cited=[("취업규칙", "제20조"), ("취업규칙", "제20조")]), latency_s=0.1,
                            at=NOW)
        await recorder.close()

        [record] = await SqliteRecordStore(store.path, create=False).turns(0)
        assert record.topic_nouns == ()
        assert [(c.doc, c.article) for c in record.citations] == [("취업규칙", "제20조")]  # one per article

    async def test_opt_in_keeps_truncated_question_answer_and_comment(self, tmp_path: Path, clock: FakeClock):
        store = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(store, keep_questions=True, clock=clock)

        recorder.turn_ended(_turn("연차 " * 400), platform="web", outcome="answered", answer=_answer(),
                            latency_s=0.1, at=NOW)
        recorder.feedback_given(Feedback(platform="web", conversation_key="web:tab", user="u", rating="down",
                                         comment="틀렸어요", turn_id="t1"), at=NOW)
        await recorder.close()

        reader = SqliteRecordStore(store.path, create=False)
        [record], [vote] = await reader.turns(0), await reader.feedback(0)
        assert record.question.startswith("연차 연차") and len(record.question) == 300
        assert record.answer.startswith("답변 본문")
        assert vote.comment == "틀렸어요" and vote.turn_id == "t1"


class TestRecorderNeverHoldsATurn:
    async def test_failed_writes_are_logged_and_counted_not_raised(self, tmp_path: Path, clock: FakeClock, caplog):
        recorder = TurnRecorder(FailingStore(tmp_path / "records.sqlite"), clock=clock)

        recorder.turn_ended(_turn(), platform="slack", outcome="answered", answer=_answer(), latency_s=0.1, at=NOW)
        await recorder.flush()

        assert recorder.dropped == 1 and recorder.written == 0
        assert "records not written: ConnectionError" in caplog.text
        assert SECRET_QUESTION not in caplog.text
        await recorder.close()

    async def test_full_queue_drops_records_while_the_store_is_stalled(self, tmp_path: Path, clock: FakeClock):
        store = GatedStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(store, max_pending=3, clock=clock)

        for i in range(5):  # returns at once although nothing can be written
            recorder.turn_ended(_turn(turn_id=f"t{i}"), platform="web", outcome="answered", answer=_answer(),
                                latency_s=0.1, at=NOW + i)
        store.gate.set()
        await recorder.close()

        assert recorder.dropped >= 1
        written = await SqliteRecordStore(store.path, create=False).turns(0)
        assert len(written) == recorder.written == 5 - recorder.dropped

    async def test_service_turn_completes_while_the_record_store_is_stalled(self, tmp_path: Path, pipeline, store,
                                                                             metrics, clock: FakeClock):
        records = GatedStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(records, clock=clock)
        service = BotService(pipeline=pipeline, store=store, metrics=metrics, clock=clock, recorder=recorder)

        events = [e async for e in service.answer(_turn("연차 며칠", key="web:tab0000001"))]

        assert events[-1].kind == "done"  # answered although the record is still waiting for the store
        assert recorder.written == 0
        records.gate.set()
        await recorder.close()
        [record] = await SqliteRecordStore(records.path, create=False).turns(0)
        assert (record.platform, record.outcome, record.llm_calls) == ("web", "answered", 2)


    async def test_cli_turns_are_tools_not_usage_and_are_not_recorded(self, tmp_path: Path, pipeline, store,
                                                                       metrics, clock: FakeClock):
        records = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(records, clock=clock)
        service = BotService(pipeline=pipeline, store=store, metrics=metrics, clock=clock, recorder=recorder)

        [e async for e in service.answer(_turn("연차 며칠", turn_id="cli1", key="cli:local:chat"))]
        [e async for e in service.answer(_turn("연차 며칠", turn_id="web1", key="web:tab0000001"))]
        await recorder.close()

        assert [t.turn_id for t in await SqliteRecordStore(records.path, create=False).turns(0)] == ["web1"]


class TestRetention:
    async def test_records_older_than_the_retention_are_purged_on_write(self, tmp_path: Path, clock: FakeClock):
        store = SqliteRecordStore(tmp_path / "records.sqlite")
        old = TurnRecord(turn_id="old", at=NOW - 40 * 86400, platform="web", outcome="answered")
        await store.write([old], [FeedbackRecord(at=NOW - 40 * 86400, platform="web", rating="up")])
        recorder = TurnRecorder(store, retention_days=30, clock=clock)

        recorder.turn_ended(_turn(), platform="web", outcome="answered", answer=_answer(), latency_s=0.1, at=NOW)
        await recorder.close()

        reader = SqliteRecordStore(store.path, create=False)
        assert [t.turn_id for t in await reader.turns(0)] == ["t1"]
        assert await reader.feedback(0) == []

    async def test_purge_everything_leaves_no_text_in_the_file(self, tmp_path: Path, clock: FakeClock):
        store = SqliteRecordStore(tmp_path / "records.sqlite")
        recorder = TurnRecorder(store, keep_questions=True, clock=clock)
        recorder.turn_ended(_turn(), platform="web", outcome="answered", answer=_answer(), latency_s=0.1, at=NOW)
        await recorder.close()

        reader = SqliteRecordStore(store.path, create=False)
        assert await reader.purge(None) == 1
        await reader.close()

        assert SECRET_QUESTION.encode() not in store.path.read_bytes()

    async def test_report_store_never_creates_the_file(self, tmp_path: Path, clock: FakeClock):
        reader = SqliteRecordStore(tmp_path / "absent" / "records.sqlite", create=False)

        assert await reader.turns(0) == [] and await reader.purge(None) == 0
        assert not (tmp_path / "absent").exists()
