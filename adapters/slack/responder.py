"""Turning a Slack question into a Turn and the service's AnswerEvents into Slack messages.

`ThreadResponder` answers in a thread, streamed. `CommandResponder` answers a slash command privately
through its `response_url`. Both read the event stream with `AnswerCollector`, which keeps the
sanitised text and the final answer, so every path that ends without an answer still shows a message.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import ScopeRequest, TurnService
from adapters.conversation import ConversationKey
from adapters.slack.blocks import AnswerBlocksRequest, build_answer_blocks
from adapters.slack.history import ThreadHistoryLoader
from adapters.slack.inbound import BotIdentity, SlackQuestion
from adapters.slack.payloads import FeedbackPayload, SharePayload
from adapters.slack.records import AnswerRecord, RecentAnswers
from adapters.slack.sanitize import read_user_text
from adapters.slack.streaming import (
    MESSAGE_PART_CHARS,
    AnswerStreamer,
    AnswerStreamerFactory,
    StreamTarget,
    choose_split,
)
from adapters.text import StreamSanitizer, sanitize_untrusted
from rag.answer_fold import AnswerFold
from rag.lang import detect_language, framing_for
from rag.models import Answer, AnswerEvent, AnswerEventKind, Citation, Message, Turn
from rag.text import question_problem

logger = logging.getLogger(__name__)

Respond = Callable[..., Awaitable[Any]]
# A response_url takes five posts; one is kept for a button on the answer (share, feedback).
_MAX_COMMAND_PARTS = 4


class AnswerCollector:
    """Reads one turn's AnswerEvents (folded by `AnswerFold`), sanitising streamed text as it comes."""

    def __init__(self, on_status: Callable[[str], Awaitable[None]], on_text: Callable[[str], Awaitable[None]],
                 *, language: str = "ko"):
        self._on_status = on_status
        self._said = framing_for(language)  # the fallback error in the asker's language
        self._on_text = on_text
        self._sanitizer = StreamSanitizer()
        self._fold = AnswerFold()
        self.streamed = ""
        self.error = ""

    @property
    def answer(self) -> Answer | None:
        return self._fold.answer

    @property
    def citations(self) -> tuple[Citation, ...]:
        return self._fold.citations

    @property
    def followups(self) -> tuple[str, ...]:
        return self._fold.followups

    async def read(self, events: Any) -> None:
        async for event in events:
            await self._take(event)

    async def _take(self, event: AnswerEvent) -> None:
        self._fold.take(event)
        if event.kind is AnswerEventKind.STATUS:
            await self._on_status(event.text)
        elif event.kind is AnswerEventKind.DELTA:
            safe = self._sanitizer.feed(event.text)
            self.streamed += safe
            await self._on_text(safe)
        elif event.kind is AnswerEventKind.ERROR:
            self.error = event.text or self._said.INTERNAL_ERROR

    def final_text(self) -> str:
        """The sanitised text the user should end up reading: the answer, or what came plus the error."""
        if self.answer is not None:
            return sanitize_untrusted(self.answer.text)
        shown = self.streamed + self._sanitizer.flush()
        problem = sanitize_untrusted(self.error or self._said.INTERNAL_ERROR)
        return f"{shown}\n\n{problem}" if shown.strip() else problem


class ThreadResponder:
    """Answers a question in its thread: history, scope, a streamed reply, sources and buttons."""

    def __init__(
        self,
        service: TurnService,
        client: AsyncWebClient,
        *,
        streamers: AnswerStreamerFactory,
        history: ThreadHistoryLoader,
        recent: RecentAnswers,
        max_question_chars: int,
    ) -> None:
        self._service = service
        self._client = client
        self._streamers = streamers
        self._history = history
        self._recent = recent
        self._max_question_chars = max_question_chars

    async def answer(self, question: SlackQuestion, bot: BotIdentity, *, claim: bool = True) -> None:
        """Answer once: with `claim`, another delivery of the message (retry, mention twice) is dropped."""
        if claim and not await self._service.claim_event(f"slack:message:{question.channel}:{question.ts}"):
            logger.info("slack message %s/%s already answered; dropped", question.channel, question.ts)
            return
        target = StreamTarget(
            channel=question.channel, thread_ts=question.thread_ts, team=question.team, user=question.user
        )
        text = read_user_text(question.text, bot_user_id=bot.user_id)
        problem = question_problem(text, max_chars=self._max_question_chars)
        if problem:
            await self._client.chat_postMessage(
                channel=target.channel, thread_ts=target.thread_ts, text=sanitize_untrusted(problem)
            )
            return
        streamer = self._streamers.create(target)
        language = detect_language(text)  # the reply's framing and buttons follow the question (rag/lang)
        said = framing_for(language)
        try:
            await streamer.status(said.STATUS_UNDERSTANDING)
            turn = Turn(
                turn_id=f"slack:{question.channel}:{question.ts}",
                text=text,
                user=question.user,
                conversation_key=question.conversation_key,
                history=await self._load_history(question, bot),
                scope=await self._service.scope_for(
                    ScopeRequest(
                        platform="slack",
                        workspace=question.team,
                        channel=question.channel,
                        is_direct=question.is_direct,
                    )
                ),
            )
            collector = AnswerCollector(streamer.status, streamer.write, language=language)
            await collector.read(self._service.answer(turn))
        except Exception:
            logger.exception("slack answer failed in %s/%s", question.channel, question.thread_ts)
            await self._finish_quietly(streamer, sanitize_untrusted(said.INTERNAL_ERROR))
            return
        try:
            await streamer.finish(collector.final_text(), self._final_blocks(collector, turn))
        except Exception:
            logger.exception("slack could not post the answer in %s/%s", question.channel, question.thread_ts)

    async def _load_history(self, question: SlackQuestion, bot: BotIdentity) -> tuple[Message, ...]:
        key = question.conversation_key
        if await self._service.has_history(key):
            return tuple(await self._service.history(key))
        if not question.is_thread_reply:
            return ()
        return await self._history.load(
            question.channel,
            question.thread_ts,
            before_ts=question.ts,
            bot_user_id=bot.user_id,
            bot_id=bot.bot_id,
        )

    def _final_blocks(self, collector: AnswerCollector, turn: Turn) -> list[dict[str, Any]]:
        if collector.answer is None:
            return []
        record = _remember(self._recent, collector.answer, collector, turn)
        feedback = FeedbackPayload.build(record.answer_id, record.question, record.citations)
        return build_answer_blocks(
            AnswerBlocksRequest(
                citations=record.citations,
                followups=record.followups,
                feedback_value=feedback.to_value(),
                language=collector.answer.language or detect_language(turn.text),
            )
        )

    @staticmethod
    async def _finish_quietly(streamer: AnswerStreamer, text: str) -> None:
        try:
            shown = streamer.text
            await streamer.finish(f"{shown}\n\n{text}" if shown.strip() else text, [])
        except Exception:
            logger.exception("slack could not show the error message either")


class CommandResponder:
    """Answers `/regulation …` privately through the command's response_url, with a share button."""

    def __init__(
        self,
        service: TurnService,
        *,
        recent: RecentAnswers,
        max_question_chars: int,
        part_chars: int = MESSAGE_PART_CHARS,
    ) -> None:
        self._service = service
        self._recent = recent
        self._max_question_chars = max_question_chars
        self._part_chars = part_chars

    def problem(self, raw_text: str) -> str:
        """What to say at once instead of answering; "" when the command text is a question."""
        return question_problem(read_user_text(raw_text), max_chars=self._max_question_chars)

    async def answer(self, command: dict[str, Any], respond: Respond) -> None:
        """Answer the command; `respond` posts to its response_url (ephemeral unless shared)."""
        text = read_user_text(str(command.get("text") or ""))
        team, channel = str(command.get("team_id") or ""), str(command.get("channel_id") or "")
        key = ConversationKey.slack_command(team, channel, command.get("trigger_id") or RecentAnswers.new_id()).text
        language = detect_language(text)
        collector = AnswerCollector(_ignore, _ignore, language=language)
        try:
            turn = Turn(
                turn_id=f"slack:command:{command.get('trigger_id', '')}",
                text=text,
                user=str(command.get("user_id") or ""),
                conversation_key=key,
                scope=await self._service.scope_for(
                    ScopeRequest(
                        platform="slack",
                        workspace=team,
                        channel=channel,
                        is_direct=str(command.get("channel_name")) == "directmessage",
                    )
                ),
            )
            await collector.read(self._service.answer(turn))
        except Exception:
            logger.exception("slack command answer failed in %s", channel)
            await respond(text=sanitize_untrusted(framing_for(language).INTERNAL_ERROR), response_type="ephemeral")
            return
        final = collector.final_text()
        blocks: list[dict[str, Any]] = []
        if collector.answer is not None:
            record = _remember(self._recent, collector.answer, collector, turn)
            feedback = FeedbackPayload.build(record.answer_id, text, record.citations)
            blocks = build_answer_blocks(
                AnswerBlocksRequest(
                    citations=record.citations,
                    feedback_value=feedback.to_value(),
                    share_value=SharePayload.build(record.answer_id, text).to_value(),
                    language=language,
                )
            )
        parts = split_parts(final, self._part_chars)[:_MAX_COMMAND_PARTS]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            part_blocks = build_answer_blocks(AnswerBlocksRequest(answer_text=part)) + (blocks if last else [])
            await respond(text=part, blocks=part_blocks, response_type="ephemeral", replace_original=False)


def _remember(recent: RecentAnswers, answer: Answer, collector: AnswerCollector, turn: Turn) -> AnswerRecord:
    """Keep what the buttons under an answer need (feedback, share) until they are clicked."""
    record = AnswerRecord(
        answer_id=recent.new_id(),
        conversation_key=turn.conversation_key,
        question=turn.text,
        answer=answer.text,
        citations=collector.citations,
        followups=collector.followups,
        turn_id=turn.turn_id,
    )
    recent.remember(record.answer_id, record)
    return record


def split_parts(text: str, part_chars: int) -> list[str]:
    """Text cut into messages of at most `part_chars`, at paragraph or line breaks where possible."""
    parts: list[str] = []
    start = 0
    while len(text) - start > part_chars:
        end = choose_split(text, start, part_chars, min_end=start)
        parts.append(text[start:end])
        start = end
    parts.append(text[start:])
    return parts


async def _ignore(_: str) -> None:
    return None


__all__ = ["AnswerCollector", "CommandResponder", "ThreadResponder", "question_problem", "split_parts"]
