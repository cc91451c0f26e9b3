"""Rendering a stream of AnswerEvents into Teams messages.

Two renderers, chosen by where the question was asked:

- `PersonalChatStreamer` (one-on-one chats, the only place Teams streams): an informative status,
  cumulative text updates at most once per `min_interval_s`, then the final message, all within
  Teams' two-minute stream limit.
- `ThreadReplyRenderer` (channel threads, group chats): a placeholder message edited about every
  two seconds, replaced in place by the final answer; or a single post.

Both send through an `ActivitySender` and read time from a `Clock`, so tests drive them without a
network or real waiting. Connector failures arrive as `ConnectorCallFailed`: 429 (and 412/502/503/504)
back off and retry, 413 shortens or splits the text, 403 ends a stream (the user pressed Stop, or the
stream ran out of time).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from adapters.teams import cards, labels
from adapters.teams.delivery import (
    CONNECTOR_RETRY,
    ActivitySender,
    Clock,
    ConnectorCallFailed,
    Deliverer,
    Payload,
)
from rag.answer_fold import AnswerFold
from rag.lang import framing_for
from rag.llm import RetryPolicy
from rag.models import Answer, AnswerEvent, AnswerEventKind, Citation

logger = logging.getLogger(__name__)


class RenderOutcome(BaseModel):
    """What a renderer delivered: the message that carries the final answer (feedback targets it)."""

    model_config = ConfigDict(frozen=True)

    answer: Answer | None = None
    message_id: str = ""
    delivered: bool = False


def _final_parts(answer: Answer, seen: AnswerFold,
                 max_chars: int) -> tuple[list[str], tuple[Citation, ...], tuple[str, ...]]:
    """The final message's parts (the answer's text, else what streamed), citations and follow-ups as folded."""
    return cards.split_text(answer.text or seen.text, max_chars), seen.citations, seen.followups


def _plain_ai_part(text: str, stream_id: str | None) -> Payload:
    return cards.plain_message(text, stream_id=stream_id, ai_generated=True)


async def _close(events: AsyncIterator[AnswerEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


class _EventRenderer:
    """Walks the AnswerEvents; subclasses decide how progress, the answer and failures look."""

    _language = "ko"  # the question's language (rag/lang): the fallback error and the card's labels follow it

    async def render(self, events: AsyncIterator[AnswerEvent]) -> RenderOutcome:
        """Deliver the answer the events describe; every path ends with a message to the user.

        After the final message the remaining events are still drained (not closed), because the
        service saves the conversation history after its last event.
        """
        seen = AnswerFold()
        outcome: RenderOutcome | None = None
        try:
            async for event in events:
                if outcome is not None:
                    continue
                seen.take(event)
                if event.kind == AnswerEventKind.STATUS:
                    await self._on_status(event.text, seen)
                elif event.kind == AnswerEventKind.DELTA:
                    await self._on_delta(seen)
                elif event.kind == AnswerEventKind.DONE and event.answer is not None:
                    outcome = await self._finish(event.answer, seen)
                elif event.kind == AnswerEventKind.ERROR:
                    outcome = await self._fail(event.text or framing_for(self._language).INTERNAL_ERROR)
                if self._stopped_by_user:
                    logger.info("Teams stream stopped by the user")
                    return RenderOutcome()
        except ConnectorCallFailed:
            raise
        except Exception:
            logger.exception("The answer stream failed")
        finally:
            await _close(events)
        if outcome is None:
            outcome = await self._fail(framing_for(self._language).INTERNAL_ERROR)
        return outcome

    @property
    def _stopped_by_user(self) -> bool:
        return False

    async def _on_status(self, text: str, seen: AnswerFold) -> None:
        raise NotImplementedError

    async def _on_delta(self, seen: AnswerFold) -> None:
        raise NotImplementedError

    async def _finish(self, answer: Answer, seen: AnswerFold) -> RenderOutcome:
        raise NotImplementedError

    async def _fail(self, text: str) -> RenderOutcome:
        raise NotImplementedError


class PersonalChatStreamer(_EventRenderer):
    """Streams an answer into a one-on-one chat with Teams' streaming protocol.

    Teams allows one update a second and two minutes per stream; only the final message may carry
    the AI label, citations, feedback buttons and cards.
    """

    def __init__(
        self,
        sender: ActivitySender,
        *,
        clock: Clock,
        min_interval_s: float = 1.2,
        stream_budget_s: float = 100.0,
        max_text_chars: int = 20_000,
        retry: RetryPolicy | None = None,
        language: str = "ko",
    ) -> None:
        if min_interval_s < 1.0:
            raise ValueError("min_interval_s must be at least 1.0: Teams throttles faster streams with 403")
        if not 0 < stream_budget_s < 120:
            raise ValueError("stream_budget_s must leave room for the final message within Teams' 120 s")
        self._deliver = Deliverer(sender, clock, retry or CONNECTOR_RETRY)
        self._clock = clock
        self._min_interval_s = min_interval_s
        self._budget_s = stream_budget_s
        self._max_text_chars = max_text_chars
        self._stream_id: str | None = None
        self._sequence = 0
        self._started_at: float | None = None
        self._last_sent_at: float | None = None
        self._not_before = 0.0
        self._updates_enabled = True
        self._stream_ended = False  # finalised early (budget) or killed by Teams (timeout)
        self._cancelled = False  # the user pressed Stop
        self._language = language

    async def _on_status(self, text: str, seen: AnswerFold) -> None:
        if not seen.text:
            await self._update("informative", text)

    async def _on_delta(self, seen: AnswerFold) -> None:
        await self._update("streaming", seen.text)

    @property
    def _stopped_by_user(self) -> bool:
        return self._cancelled

    async def _update(self, stream_type: Literal["informative", "streaming"], text: str) -> None:
        if not self._updates_enabled or self._stream_ended or self._cancelled or not text:
            return
        now = self._clock.monotonic()
        if self._last_sent_at is not None and now - self._last_sent_at < self._min_interval_s:
            return  # buffered; the next update (or the final message) carries it
        if now < self._not_before:
            return
        if self._started_at is not None and now - self._started_at > self._budget_s:
            await self._end_stream_early(text if stream_type == "streaming" else "")
            return
        self._sequence += 1
        payload = cards.stream_update(text, stream_type=stream_type, sequence=self._sequence, stream_id=self._stream_id)
        try:
            activity_id = await self._deliver.send(payload, retry=False)
        except ConnectorCallFailed as error:
            self._on_update_failed(error, now)
            return
        if self._stream_id is None:
            if not activity_id:
                logger.warning("Teams returned no stream id; answering without streaming")
                self._updates_enabled = False
                return
            self._stream_id = activity_id
            self._started_at = now
        self._last_sent_at = now

    def _on_update_failed(self, error: ConnectorCallFailed, now: float) -> None:
        if error.status in (429, 412):
            self._not_before = now + (error.retry_after_s or 2 * self._min_interval_s)
        elif error.status == 413:
            self._updates_enabled = False  # the final message gets shortened instead
        elif error.stream_expired:
            self._stream_ended = True
        elif error.status == 403:
            self._cancelled = True
        elif 400 <= error.status < 500 and self._stream_id is None:
            logger.warning("Teams refused streaming here (%d); answering with one message", error.status)
            self._updates_enabled = False
        else:
            raise error

    async def _end_stream_early(self, text: str) -> None:
        """Close a stream that is about to hit Teams' time limit; the answer follows as a new message."""
        self._stream_ended = True
        if not text or self._stream_id is None:
            return
        try:
            await self._deliver.send(cards.plain_message(text, stream_id=self._stream_id, ai_generated=True))
        except ConnectorCallFailed as error:
            logger.warning("Closing an expiring Teams stream failed (%d)", error.status)

    def _open_stream(self) -> str | None:
        return None if self._stream_ended or self._cancelled else self._stream_id

    async def _finish(self, answer: Answer, seen: AnswerFold) -> RenderOutcome:
        parts, citations, followups = _final_parts(answer, seen, self._max_text_chars)
        stream_id = self._open_stream()
        for part in parts[:-1]:
            await self._send_final(_plain_ai_part, part, stream_id)
            stream_id = None

        def last(text: str, sid: str | None) -> Payload:
            return cards.answer_message(text, citations=citations, followups=followups, stream_id=sid,
                                        language=answer.language or self._language)

        message_id = await self._send_final(last, parts[-1], stream_id)
        if message_id is None:
            return RenderOutcome(answer=answer)
        return RenderOutcome(answer=answer, message_id=message_id or (stream_id or ""), delivered=True)

    async def _fail(self, text: str) -> RenderOutcome:
        message_id = await self._send_final(
            lambda body, sid: cards.plain_message(body, stream_id=sid), text, self._open_stream()
        )
        return RenderOutcome(message_id=message_id or "", delivered=message_id is not None)

    async def _send_final(
        self, build: Callable[[str, str | None], Payload], text: str, stream_id: str | None
    ) -> str | None:
        """Send a final message (closing the stream when one is open); None when the user stopped it."""
        try:
            return await self._deliver.deliver_text(lambda body: build(body, stream_id), text, replace=None)
        except ConnectorCallFailed as error:
            if stream_id is None or error.status != 403:
                raise
            if not error.stream_expired:
                logger.info("Teams stream stopped by the user before the final message")
                return None
        logger.warning("The Teams stream expired; sending the answer as a new message")
        self._stream_ended = True
        return await self._deliver.deliver_text(lambda body: build(body, None), text, replace=None)


class ThreadReplyRenderer(_EventRenderer):
    """Answers in a channel thread or group chat, where Teams does not stream.

    With `edit_placeholder`, the first status posts a placeholder that is edited with the partial
    answer about every `update_interval_s` and finally replaced by the answer; without it the answer
    is posted once.
    """

    def __init__(
        self,
        sender: ActivitySender,
        *,
        clock: Clock,
        edit_placeholder: bool = True,
        update_interval_s: float = 2.0,
        max_text_chars: int = 20_000,
        retry: RetryPolicy | None = None,
        language: str = "ko",
    ) -> None:
        if update_interval_s < 1.0:
            raise ValueError("update_interval_s must be at least 1.0: Teams rate-limits edits per thread")
        self._deliver = Deliverer(sender, clock, retry or CONNECTOR_RETRY)
        self._clock = clock
        self._edit_placeholder = edit_placeholder
        self._interval_s = update_interval_s
        self._max_text_chars = max_text_chars
        self._placeholder_id: str | None = None
        self._last_edit_at: float | None = None
        self._edits_enabled = True
        self._language = language

    async def _on_status(self, text: str, seen: AnswerFold) -> None:
        if not seen.text:
            await self._progress(text)

    async def _on_delta(self, seen: AnswerFold) -> None:
        await self._progress(seen.text + " " + labels.TRUNCATION_MARK)

    async def _progress(self, text: str) -> None:
        if not self._edit_placeholder or not self._edits_enabled or not text.strip():
            return
        now = self._clock.monotonic()
        if self._last_edit_at is not None and now - self._last_edit_at < self._interval_s:
            return
        payload = cards.plain_message(cards.shorten(text, self._max_text_chars))
        try:
            if self._placeholder_id is None:
                self._placeholder_id = await self._deliver.send(payload) or None
            else:
                await self._deliver.update(self._placeholder_id, payload, retry=False)
        except ConnectorCallFailed as error:
            if error.status in (429, 412):
                self._last_edit_at = now + (error.retry_after_s or self._interval_s)
                return
            if error.status >= 500:
                raise
            logger.warning("Teams refused a progress edit (%d); posting the answer once", error.status)
            self._edits_enabled = False
            return
        self._last_edit_at = now

    async def _finish(self, answer: Answer, seen: AnswerFold) -> RenderOutcome:
        parts, citations, followups = _final_parts(answer, seen, self._max_text_chars)
        replace = self._placeholder_id
        for part in parts[:-1]:
            await self._post(lambda text: cards.plain_message(text, ai_generated=True), part, replace)
            replace = None

        def last(text: str) -> Payload:
            return cards.answer_message(text, citations=citations, followups=followups,
                                        language=answer.language or self._language)

        message_id = await self._post(last, parts[-1], replace)
        return RenderOutcome(answer=answer, message_id=message_id, delivered=True)

    async def _fail(self, text: str) -> RenderOutcome:
        message_id = await self._post(cards.plain_message, text, self._placeholder_id)
        return RenderOutcome(message_id=message_id, delivered=True)

    async def _post(self, build: Callable[[str], Payload], text: str, replace: str | None) -> str:
        if replace:
            try:
                return await self._deliver.deliver_text(build, text, replace=replace)
            except ConnectorCallFailed as error:
                if error.status >= 500:
                    raise
                # The placeholder may be gone (deleted by a user); post the answer instead.
                logger.warning("Editing the placeholder failed (%d); posting a new message", error.status)
        return await self._deliver.deliver_text(build, text, replace=None)


__all__ = ["PersonalChatStreamer", "RenderOutcome", "ThreadReplyRenderer"]
