"""The bot service behind every adapter: input checks, limits, per-conversation lock, history, the pipeline.

`BotService` implements `adapters.base.TurnService`. The service reads a turn's conversation key
(`adapters.conversation.ConversationKey`) for the platform (metrics label), the workspace and the channel
(rate-limit buckets).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from adapters.base import Feedback, ScopeRequest
from adapters.conversation import ConversationKey
from bot.report.recorder import TurnRecorder
from bot.service.limits import AnswerQueue, LimitsConfig, RateLimiter
from bot.service.metrics import Metrics
from bot.service.scopes import ScopeResolver
from bot.state import (
    ConversationLocks,
    EventClaims,
    HistoryStore,
    LockBackend,
    LockTimeout,
    RateBuckets,
    StateUnavailable,
)
from rag import messages
from rag.answer_fold import AnswerFold
from rag.models import Answer, AnswerEvent, AnswerEventKind, Message, Role, Scope, Turn
from rag.text import normalize_text, question_problem

logger = logging.getLogger(__name__)

_UNSALTED_KEY = b"regbot-user-pseudonym"  # records off: see BotService._pseudonym

# How often a turn waiting for a channel/workspace token hears its new place in line (Slack status edits).
_POSITION_UPDATE_S = 2.0


class AnswerRunner(Protocol):
    """What the service needs from the RAG pipeline: a stream of events ending with `done` or `error`."""

    def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]: ...


class ServiceState(Protocol):
    """The state concerns the service uses (`bot.state.StateStores` has them; the answer cache is the pipeline's)."""

    @property
    def claims(self) -> EventClaims: ...

    @property
    def locks(self) -> LockBackend: ...

    @property
    def buckets(self) -> RateBuckets: ...

    @property
    def history(self) -> HistoryStore: ...


@dataclass
class _TurnRecord:
    """What one turn did, for its log line and metrics."""

    platform: str
    started: float
    outcome: str = "abandoned"  # the adapter stopped reading before the end
    answer: Answer | None = None
    question_chars: int = 0
    notes: list[str] = field(default_factory=list)


class BotService:
    """Answers turns for every adapter; see `adapters.base.TurnService`.

    Order of a turn: validate the text, take rate-limit tokens (a channel's or workspace's burst waits for its
    token), wait for the conversation's lock, wait for an answer slot (status events carry the queue position),
    load history, relay the pipeline (which owns the answer deadline), save the question and answer. Never
    raises: failures become an `error` event.
    """

    def __init__(
        self,
        *,
        pipeline: AnswerRunner,
        store: ServiceState,
        metrics: Metrics,
        limits: LimitsConfig | None = None,
        scopes: ScopeResolver | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        log_content: bool = False,
        recorder: TurnRecorder | None = None,
    ) -> None:
        self._pipeline = pipeline
        self._recorder = recorder
        self._store = store
        self._metrics = metrics
        self._limits = limits if limits is not None else LimitsConfig()
        self._scopes = scopes if scopes is not None else ScopeResolver()
        self._clock = clock
        self._sleep = sleep
        self._log_content = log_content
        # Platform user ids never reach shared state raw: they are keyed by the records' salted HMAC. With
        # records off there is no shared salt: a fixed key keeps replicas' buckets shared (pseudonymous, not
        # secret: whoever reads Redis and knows an id can test it).
        self._pseudonym_key: bytes | None = None
        self._rate_limiter = RateLimiter(store.buckets, self._limits)
        self._queue = AnswerQueue(
            max_active=self._limits.max_active_answers,
            max_waiting=self._limits.max_waiting_answers,
            metrics=metrics,
        )
        self._locks = ConversationLocks(store.locks, ttl_s=self._limits.lock_ttl_s, wait_s=self._limits.lock_wait_s)

    @property
    def locks(self) -> ConversationLocks:
        return self._locks

    @property
    def queue(self) -> AnswerQueue:
        return self._queue

    # --- TurnService ----------------------------------------------------------

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
        """True the first time `key` is seen; when the store fails, True (answering twice beats never)."""
        try:
            first = await self._store.claims.claim(key, ttl_s)
        except StateUnavailable as exc:
            logger.warning("dedupe unavailable, letting the event through: %s", exc)
            return True
        if not first:
            self._metrics.observe_duplicate()
        return first

    async def has_history(self, conversation_key: str) -> bool:
        try:
            return await self._store.history.exists(conversation_key)
        except StateUnavailable as exc:
            logger.warning("history unavailable: %s", exc)
            return False

    async def history(self, conversation_key: str) -> list[Message]:
        try:
            return await self._store.history.load(conversation_key)
        except StateUnavailable as exc:
            logger.warning("history unavailable: %s", exc)
            return []

    async def scope_for(self, request: ScopeRequest) -> Scope:
        return self._scopes.resolve(request)

    async def record_feedback(self, feedback: Feedback) -> None:
        """Count the vote and keep it as a turn record (salted ids; the comment only with REGBOT_KEEP_QUESTIONS).

        Records are the one place votes live, under the records' retention and `regbot report --purge`; with
        records off (REGBOT_RECORDS_DAYS=0) only the counter is kept.
        """
        self._metrics.observe_feedback(feedback.platform, feedback.rating)
        if self._recorder is not None:
            self._recorder.feedback_given(feedback, at=self._clock())

    async def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        """Answer one turn; always ends with a `done` or an `error` event and never raises."""
        record = _TurnRecord(platform=ConversationKey.parse(turn.conversation_key).platform, started=self._clock())
        try:
            # aclosing: an adapter that stops reading still releases the lock and the answer slot at once.
            async with contextlib.aclosing(self._answer(turn, record)) as events:
                async for event in events:
                    yield event
        except Exception:
            record.outcome = "error"
            self._metrics.observe_error("internal")
            logger.exception("turn %s failed", turn.turn_id)
            yield AnswerEvent.error(messages.INTERNAL_ERROR)
        finally:
            self._finish(turn, record)

    # --- the turn -------------------------------------------------------------

    async def _answer(self, turn: Turn, record: _TurnRecord) -> AsyncIterator[AnswerEvent]:
        text = normalize_text(turn.text).strip()
        record.question_chars = len(text)
        problem = self._input_problem(text)
        if problem:
            record.outcome = "invalid"
            yield AnswerEvent.error(problem)
            return

        rate = await self._rate_limiter.check(
            user_key=await self._user_bucket(turn),
            channel_key=self._channel_bucket(turn),
            workspace_key=self._workspace_bucket(turn),
            now=self._clock(),
        )
        if rate.retry_after_s > 0:
            record.outcome = "rate_limited"
            yield AnswerEvent.error(messages.RATE_LIMITED.format(seconds=max(1, math.ceil(rate.retry_after_s))))
            return
        if rate.wait_s > 0:
            record.notes.append(f"waited {rate.wait_s:.1f} s for a channel/workspace token")
            async for position in self._rate_positions(rate.wait_s, rate.per_s):
                yield AnswerEvent.status(messages.STATUS_QUEUED.format(position=position))

        conversation_key = turn.conversation_key or turn.turn_id
        async with contextlib.AsyncExitStack() as held:
            try:
                await held.enter_async_context(self._locks.hold(conversation_key))
            except LockTimeout as exc:
                record.outcome = "busy"
                record.notes.append(str(exc))
                self._metrics.observe_error("lock")
                yield AnswerEvent.error(messages.BUSY)
                return

            ticket = self._queue.try_enter()
            if ticket is None:
                record.outcome = "busy"
                record.notes.append("answer queue full")
                yield AnswerEvent.error(messages.BUSY)
                return
            held.callback(ticket.release)
            async for position in ticket.positions():
                yield AnswerEvent.status(messages.STATUS_QUEUED.format(position=position))

            stored = await self._store.history.load(conversation_key)
            history = turn.history or tuple(stored)
            pipeline_turn = turn.model_copy(update={"text": text, "history": history})
            relayed = contextlib.aclosing(self._run_pipeline(pipeline_turn, record))
            async for event in await held.enter_async_context(relayed):
                if event.kind == AnswerEventKind.DONE and event.answer is not None:
                    # Saved before `done` goes out: an adapter may stop reading at `done`.
                    seed = () if stored else turn.history
                    await self._save_exchange(conversation_key, seed, text, event.answer)
                yield event

    async def _run_pipeline(self, turn: Turn, record: _TurnRecord) -> AsyncIterator[AnswerEvent]:
        """Relay the pipeline's events; stop after its `done` or `error`. The pipeline owns the deadline."""
        fold = AnswerFold()
        async with contextlib.aclosing(self._pipeline.run(turn)) as events:
            async for event in events:
                fold.take(event)
                if fold.done:
                    record.outcome = "answered"
                    record.answer = fold.answer
                    yield event
                    return
                if fold.failed:
                    timed_out = fold.error.endswith(messages.TIMEOUT)
                    record.outcome = "timeout" if timed_out else "failed"
                    self._metrics.observe_error("timeout" if timed_out else "pipeline")
                    yield event
                    return
                yield event
        record.outcome = "error"
        record.notes.append("pipeline ended without done or error")
        self._metrics.observe_error("pipeline")
        yield AnswerEvent.error(messages.INTERNAL_ERROR)

    async def _rate_positions(self, wait_s: float, per_s: float) -> AsyncIterator[int]:
        """Wait `wait_s` for a lent token, yielding the place in line (turns ahead of it) as it moves up."""
        due = self._clock() + wait_s
        last = 0
        while (left := due - self._clock()) > 0:
            position = max(1, math.ceil(left * per_s))
            if position != last:
                last = position
                yield position
            await self._sleep(min(left, max(1 / per_s, _POSITION_UPDATE_S)))

    async def _save_exchange(
        self, conversation_key: str, seed: tuple[Message, ...], question: str, answer: Answer
    ) -> None:
        # A history the adapter rebuilt from the platform is stored too, so the next turn need not rebuild it.
        exchange = [
            *seed,
            Message(role=Role.USER, content=question),
            Message(role=Role.ASSISTANT, content=answer.text),
        ]
        try:
            await self._store.history.append(conversation_key, exchange)
        except StateUnavailable as exc:
            logger.warning("history not saved: %s", exc)

    # --- helpers --------------------------------------------------------------

    def _input_problem(self, text: str) -> str:
        return question_problem(text, max_chars=self._limits.max_question_chars)

    async def _pseudonym(self, value: str) -> str:
        """`value` (a platform user id) as the records' salted HMAC; "" stays ""."""
        if not value:
            return ""
        if self._pseudonym_key is None:
            salt = ""
            if self._recorder is not None:
                try:
                    salt = await self._recorder.store.salt()
                except Exception as exc:  # the records store is down: the fixed key meanwhile, never the raw id
                    logger.warning("records salt unavailable (%s); user ids keyed without it", type(exc).__name__)
                    return hmac.new(_UNSALTED_KEY, value.encode(), hashlib.sha256).hexdigest()[:16]
            self._pseudonym_key = salt.encode() if salt else _UNSALTED_KEY
        return hmac.new(self._pseudonym_key, value.encode(), hashlib.sha256).hexdigest()[:16]

    async def _user_bucket(self, turn: Turn) -> str:
        key = ConversationKey.parse(turn.conversation_key)
        if turn.user:
            return f"{key.platform}:{key.workspace}:{await self._pseudonym(turn.user)}"
        return f"conversation:{turn.conversation_key}" if turn.conversation_key else ""

    @staticmethod
    def _channel_bucket(turn: Turn) -> str:
        key = ConversationKey.parse(turn.conversation_key)
        return f"{key.platform}:{key.workspace}:{key.channel}" if key.channel else ""

    @staticmethod
    def _workspace_bucket(turn: Turn) -> str:
        key = ConversationKey.parse(turn.conversation_key)
        return f"{key.platform}:{key.workspace}" if key.workspace else ""

    def _finish(self, turn: Turn, record: _TurnRecord) -> None:
        latency_s = self._clock() - record.started
        answer = record.answer
        route = answer.route.value if answer else "-"
        self._metrics.observe_request(record.platform, record.outcome)
        if self._recorder is not None and record.platform != "cli":  # `regbot ask`/`chat` are tools, not usage
            self._recorder.turn_ended(turn, platform=record.platform, outcome=record.outcome, answer=answer,
                                      latency_s=latency_s, at=record.started)
        if answer is not None:
            self._metrics.observe_answer(
                platform=record.platform,
                route=route,
                latency_s=latency_s,
                llm_calls=answer.llm_calls,
                timings_ms=answer.timings_ms,
            )
            if answer.cache != "off":
                self._metrics.observe_cache(hit=answer.cache == "hit")
        timings = {stage: round(ms, 1) for stage, ms in (answer.timings_ms if answer else {}).items()}
        logger.info(
            "turn %s platform=%s outcome=%s route=%s llm_calls=%d llm_tokens=%s llm_breaker=%s latency_ms=%.0f "
            "chars=%d timings_ms=%s%s",
            turn.turn_id,
            record.platform,
            record.outcome,
            route,
            answer.llm_calls if answer else 0,
            json.dumps(answer.llm_tokens if answer else {}, separators=(",", ":")),
            (answer.llm_breaker if answer else "") or "-",
            latency_s * 1000,
            record.question_chars,
            json.dumps(timings),
            f" notes={record.notes}" if record.notes else "",
        )
        if self._log_content:
            logger.info("turn %s question=%r answer=%r", turn.turn_id, turn.text, answer.text if answer else "")


__all__ = ["AnswerRunner", "BotService", "ServiceState"]
