"""The recorder: turn and feedback records written in the background, never on the answer path.

    recorder = build_recorder(settings, components)     # None when REGBOT_RECORDS_DAYS=0
    recorder.turn_ended(turn, platform=..., outcome=..., answer=..., latency_s=..., at=...)   # never blocks
    recorder.feedback_given(feedback, at=...)
    await recorder.close()                               # flushes what is queued (bounded)

What a record keeps, and what it never keeps, is said in `bot.report.records`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.base import Feedback
from adapters.conversation import ConversationKey
from bot.report.records import (
    CitedArticle,
    FeedbackRecord,
    RecordStore,
    TurnRecord,
    open_record_store,
    turn_outcome,
)
from bot.report.themes import TopicNouns
from rag.lang import detect_language
from rag.models import Answer, Turn

if TYPE_CHECKING:
    from bot.app import Components
    from bot.config import Settings

logger = logging.getLogger(__name__)

QUESTION_KEEP_CHARS = 300
ANSWER_KEEP_CHARS = 600
_DAY_S = 86400.0


@dataclass(frozen=True, slots=True)
class _EndedTurn:
    turn: Turn
    platform: str
    outcome: str
    answer: Answer | None
    latency_s: float
    at: float


@dataclass(frozen=True, slots=True)
class _GivenFeedback:
    feedback: Feedback
    at: float


class TurnRecorder:
    """Writes turn and feedback records in the background: a bounded queue, batched writes, errors logged.

    `turn_ended` and `feedback_given` only enqueue (a full queue drops the record and counts it), so a slow or
    absent store never delays or fails an answer. Hashing, noun extraction and the write run in the worker.

    Args:
        store: where records go.
        keep_questions: keep question, answer and comment text (truncated); off by default.
        retention_days: records older than this are deleted (at start and about hourly).
        topic_nouns: extracts the nouns of refused questions; None keeps no nouns (no themes).
        clock: epoch seconds (injectable).
        max_pending: queue bound.
        batch_size / linger_s: at most this many records a write, gathered for this long after the first.
    """

    def __init__(
        self,
        store: RecordStore,
        *,
        keep_questions: bool = False,
        retention_days: float = 90.0,
        topic_nouns: TopicNouns | None = None,
        clock: Callable[[], float] = time.time,
        max_pending: int = 10_000,
        batch_size: int = 200,
        linger_s: float = 0.05,
    ) -> None:
        if max_pending < 1 or batch_size < 1:
            raise ValueError("max_pending and batch_size must be at least 1")
        self.store = store
        self._keep_questions = keep_questions
        self._retention_s = retention_days * _DAY_S
        self._topic_nouns = topic_nouns
        self._clock = clock
        self._batch_size = batch_size
        self._linger_s = linger_s
        self._queue: asyncio.Queue[_EndedTurn | _GivenFeedback] = asyncio.Queue(maxsize=max_pending)
        self._worker: asyncio.Task[None] | None = None
        self._salt: str | None = None
        self._next_purge = 0.0
        self.dropped = 0  # records lost to a full queue or a failed write
        self.written = 0

    # --- the two hooks (called on the answer path: enqueue only) ----------------------------------------------

    def turn_ended(self, turn: Turn, *, platform: str, outcome: str, answer: Answer | None, latency_s: float,
                   at: float) -> None:
        """Queue the record of a finished turn."""
        self._enqueue(_EndedTurn(turn=turn, platform=platform, outcome=outcome, answer=answer,
                                                 latency_s=latency_s, at=at))

    def feedback_given(self, feedback: Feedback, *, at: float) -> None:
        """Queue a 👍/👎."""
        self._enqueue(_GivenFeedback(feedback=feedback, at=at))

    def _enqueue(self, item: _EndedTurn | _GivenFeedback) -> None:
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                logger.warning("turn records: queue full, %d records dropped so far", self.dropped)
            return
        if self._worker is None or self._worker.done():
            try:
                self._worker = asyncio.get_running_loop().create_task(self._run(), name="turn-records")
            except RuntimeError:  # no running loop (an answer closed at interpreter exit): nothing can write it
                self.dropped += 1

    # --- the worker -------------------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            if self._linger_s > 0:
                # Let a burst gather: one transaction and one thread hop for many turns, after their answers.
                await asyncio.sleep(self._linger_s)
            while len(batch) < self._batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await self._write(batch)
                self.written += len(batch)
            except Exception as exc:  # a store outage must not end the worker; the payload is never logged
                self.dropped += len(batch)
                logger.warning("turn records: %d records not written: %s", len(batch), exc.__class__.__name__)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _write(self, batch: list[_EndedTurn | _GivenFeedback]) -> None:
        if self._salt is None:
            self._salt = await self.store.salt()
        if self._topic_nouns is not None and any(self._needs_nouns(item) for item in batch):
            turns, feedback = await asyncio.to_thread(self._build, batch, self._salt)  # Kiwi: off the loop
        else:
            turns, feedback = self._build(batch, self._salt)  # tens of microseconds a record
        await self.store.write(turns, feedback)
        now = self._clock()
        if self._retention_s > 0 and now >= self._next_purge:
            self._next_purge = now + 3600.0
            await self.store.purge(now - self._retention_s)

    @staticmethod
    def _needs_nouns(item: _EndedTurn | _GivenFeedback) -> bool:
        return isinstance(item, _EndedTurn) and turn_outcome(item.outcome, item.answer) == "not_covered"

    def _build(self, batch: Sequence[_EndedTurn | _GivenFeedback],
               salt: str) -> tuple[list[TurnRecord], list[FeedbackRecord]]:
        turns: list[TurnRecord] = []
        feedback: list[FeedbackRecord] = []
        for item in batch:
            if isinstance(item, _EndedTurn):
                turns.append(self._turn_record(item, salt))
            else:
                feedback.append(self._feedback_record(item, salt))
        return turns, feedback

    def _turn_record(self, ended: _EndedTurn, salt: str) -> TurnRecord:
        turn, answer = ended.turn, ended.answer
        key = ConversationKey.parse(turn.conversation_key)
        outcome = turn_outcome(ended.outcome, answer)
        cited = tuple(dict.fromkeys(CitedArticle(doc=c.doc, article=c.article) for c in answer.citations)) \
            if answer else ()
        nouns: tuple[str, ...] = ()
        if outcome == "not_covered" and self._topic_nouns is not None:
            nouns = self._topic_nouns.nouns(turn.text)
        return TurnRecord(
            turn_id=turn.turn_id,
            at=ended.at,
            platform=ended.platform,
            workspace=_hash(salt, key.workspace),
            channel=_hash(salt, key.channel),
            user=_hash(salt, turn.user),
            conversation=_hash(salt, turn.conversation_key),
            route=answer.route.value if answer else "",
            outcome=outcome,
            citations=cited,
            collections=turn.scope.collections,
            latency_ms=round(ended.latency_s * 1000, 1),
            llm_calls=answer.llm_calls if answer else 0,
            cache_hit=bool(answer and answer.cache == "hit"),
            question_chars=len(turn.text),
            language=detect_language(turn.text),
            topic_nouns=nouns,
            question=turn.text[:QUESTION_KEEP_CHARS] if self._keep_questions else "",
            answer=answer.text[:ANSWER_KEEP_CHARS] if self._keep_questions and answer else "",
        )

    def _feedback_record(self, given: _GivenFeedback, salt: str) -> FeedbackRecord:
        fb = given.feedback
        return FeedbackRecord(
            at=given.at,
            platform=fb.platform,
            rating=fb.rating,
            turn_id=fb.turn_id,
            conversation=_hash(salt, fb.conversation_key),
            user=_hash(salt, fb.user),
            comment=fb.comment[:QUESTION_KEEP_CHARS] if self._keep_questions else "",
        )

    # --- lifecycle --------------------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Wait until every queued record is written (or dropped)."""
        if self._worker is not None and not self._worker.done():
            await self._queue.join()

    async def close(self, *, timeout_s: float = 5.0) -> None:
        """Flush what is queued (at most `timeout_s`), stop the worker and close the store."""
        try:
            async with asyncio.timeout(timeout_s):
                await self.flush()
        except TimeoutError:
            logger.warning("turn records: %d records not written at shutdown", self._queue.qsize())
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        try:
            await self.store.close()
        except Exception as exc:
            logger.warning("turn records: closing the store failed: %s", exc.__class__.__name__)


def _hash(salt: str, value: str) -> str:
    if not value:
        return ""
    return hmac.new(salt.encode(), value.encode(), hashlib.sha256).hexdigest()[:16]


def build_recorder(settings: Settings, components: Components) -> TurnRecorder | None:
    """The server's recorder, or None when REGBOT_RECORDS_DAYS is 0 (no records at all)."""
    if settings.records_days <= 0:
        return None
    return TurnRecorder(
        open_record_store(settings),
        keep_questions=settings.keep_questions,
        retention_days=settings.records_days,
        topic_nouns=TopicNouns.for_tokenizer(components.tokenizer),
    )


__all__ = ["ANSWER_KEEP_CHARS", "QUESTION_KEEP_CHARS", "TurnRecorder", "build_recorder"]
