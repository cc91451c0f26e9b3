"""One handler per button under an answer: a follow-up question, 👍/👎 feedback, share in channel.

Bolt acks each click before a handler runs; a handler only acts.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import Feedback, TurnService
from adapters.conversation import ConversationKey
from adapters.slack.blocks import AnswerBlocksRequest, build_answer_blocks
from adapters.slack.errors import slack_error_code
from adapters.slack.history import question_metadata
from adapters.slack.inbound import BotIdentity, ButtonClick, SlackQuestion
from adapters.slack.payloads import FeedbackPayload, Rating, SharePayload, parse_payload
from adapters.slack.records import AnswerRecord, RecentAnswers
from adapters.slack.responder import Respond, ThreadResponder
from adapters.slack.sanitize import read_user_text
from adapters.slack.streaming import AnswerStreamerFactory, StreamTarget
from adapters.text import escape_markup, sanitize_untrusted
from rag.lang import detect_language, framing_for

logger = logging.getLogger(__name__)


def _message_text(message: dict[str, Any]) -> str:
    """The words of a posted answer: its markdown blocks, else its text."""
    parts = [str(b.get("text") or "") for b in message.get("blocks") or [] if b.get("type") == "markdown"]
    return read_user_text("\n\n".join(p for p in parts if p) or str(message.get("text") or ""))


class ButtonHandlers:
    """Acts on clicks: asks a follow-up in the thread, records feedback, shares a private answer."""

    def __init__(
        self,
        service: TurnService,
        client: AsyncWebClient,
        *,
        threads: ThreadResponder,
        streamers: AnswerStreamerFactory,
        recent: RecentAnswers,
    ) -> None:
        self._service = service
        self._client = client
        self._threads = threads
        self._streamers = streamers
        self._recent = recent

    async def on_followup(self, body: dict[str, Any], bot: BotIdentity) -> None:
        """Ask the clicked question in the same thread, as the person who clicked, with the thread's history."""
        click = ButtonClick.from_body(body)
        question, thread_ts = click.value, click.thread_ts
        if not (question and click.channel and thread_ts):
            logger.info("slack follow-up click without a thread or question; ignored")
            return
        posted = await self._post_question(click.channel, question, click.user, thread_ts=thread_ts)
        await self._ask(click, question, ts=posted, thread_ts=thread_ts, bot=bot)

    async def on_feedback(self, body: dict[str, Any], rating: Rating, respond: Respond) -> None:
        """Record 👍/👎 with the question, the answer and its sources, then thank the user privately."""
        click = ButtonClick.from_body(body)
        payload = parse_payload(FeedbackPayload, click.value)
        record = self._recent.get(payload.id) if payload else None
        feedback = Feedback(
            platform="slack",
            conversation_key=(
                record.conversation_key if record
                else ConversationKey.slack(click.team, click.channel, click.thread_ts).text
            ),
            user=click.user,
            rating=rating,
            question=record.question if record else (payload.q if payload else ""),
            answer=record.answer if record else _message_text(click.message),
            citations=record.citations if record else (payload.citations() if payload else ()),
            turn_id=record.turn_id if record else "",
        )
        await self._service.record_feedback(feedback)
        thanks = sanitize_untrusted(framing_for(detect_language(feedback.question)).FEEDBACK_THANKS)
        if click.message and click.channel:
            await self._client.chat_postEphemeral(
                channel=click.channel, user=click.user, text=thanks, thread_ts=click.thread_ts
            )
        else:  # a private slash-command answer has no message to reply under
            await respond(text=thanks, response_type="ephemeral", replace_original=False)

    async def on_share(self, body: dict[str, Any], respond: Respond, bot: BotIdentity) -> None:
        """Post a private answer in the channel: the question, and the answer in its thread."""
        click = ButtonClick.from_body(body)
        payload = parse_payload(SharePayload, click.value)
        record = self._recent.get(payload.id) if payload else None
        question = record.question if record else (payload.q if payload else "")
        if not (question and click.channel):
            logger.info("slack share click without a question; ignored")
            return
        try:
            thread_ts = await self._post_question(click.channel, question, click.user, thread_ts=None)
        except SlackApiError as error:
            logger.info("slack share failed: %s", slack_error_code(error))
            await respond(
                text=sanitize_untrusted(framing_for(detect_language(question)).SHARE_FAILED),
                response_type="ephemeral",
                replace_original=False,
            )
            return
        await respond(delete_original=True)
        if record is not None:
            await self._show_record(record, StreamTarget(channel=click.channel, thread_ts=thread_ts, team=click.team))
            return
        # Another replica gave the answer: ask again, publicly, in the new thread.
        await self._ask(click, question, ts=thread_ts, thread_ts=thread_ts, bot=bot)

    async def _ask(self, click: ButtonClick, question: str, *, ts: str, thread_ts: str, bot: BotIdentity) -> None:
        """Answer `question` (posted at `ts`) in `thread_ts` as the person who clicked."""
        asked = SlackQuestion(
            team=click.team,
            channel=click.channel,
            user=click.user,
            text=escape_markup(question),
            ts=ts,
            thread_ts=thread_ts,
            is_direct=click.channel.startswith("D"),
        )
        await self._threads.answer(asked, bot, claim=False)

    async def _show_record(self, record: AnswerRecord, target: StreamTarget) -> None:
        feedback = FeedbackPayload.build(record.answer_id, record.question, record.citations)
        blocks = build_answer_blocks(
            AnswerBlocksRequest(
                citations=record.citations, followups=record.followups, feedback_value=feedback.to_value()
            )
        )
        await self._streamers.create(target).finish(sanitize_untrusted(record.answer), blocks)

    async def _post_question(self, channel: str, question: str, user: str, *, thread_ts: str | None) -> str:
        """Post the question visibly (marked as the user's turn for history); returns its ts."""
        response = await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=sanitize_untrusted(question),
            blocks=build_answer_blocks(AnswerBlocksRequest(question=question)),
            metadata=question_metadata(question, user),
        )
        return str(response["ts"])


__all__ = ["ButtonHandlers"]
