"""A thread's conversation rebuilt from Slack when the bot's own store has none (e.g. after a restart)."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.errors import slack_error_code
from adapters.slack.sanitize import read_user_text
from rag.models import Message, Role

logger = logging.getLogger(__name__)

_PAGE_SIZE = 200
_MAX_PAGES = 5
# Subtypes that still carry a person's words; joins, edits and deletions do not.
_CONVERSATION_SUBTYPES = {None, "thread_broadcast", "file_share"}
# The bot posts a clicked follow-up (or a shared question) on the asker's behalf; the metadata marks
# it as the user's turn when the thread is read back.
QUESTION_EVENT_TYPE = "regbot_question"


def question_metadata(question: str, user: str) -> dict[str, Any]:
    """Message metadata for a question the bot posts for `user`."""
    return {"event_type": QUESTION_EVENT_TYPE, "event_payload": {"question": question, "user": user}}


def ts_key(ts: str) -> tuple[int, int]:
    """A Slack timestamp as a sortable pair (`1700000000.000100` → (1700000000, 100))."""
    seconds, _, micros = ts.partition(".")
    return int(seconds or 0), int(micros or 0)


class ThreadHistoryLoader:
    """Reads a thread with `conversations.replies`: the bot's messages become assistant turns."""

    def __init__(self, client: AsyncWebClient, *, max_messages: int = 20) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self._client = client
        self._max_messages = max_messages

    async def load(
        self, channel: str, thread_ts: str, *, before_ts: str, bot_user_id: str, bot_id: str = ""
    ) -> tuple[Message, ...]:
        """Messages older than `before_ts`, oldest first; consecutive turns of one role are merged."""
        try:
            raw = await self.replies(channel, thread_ts)
        except SlackApiError as error:
            logger.warning("slack thread history unavailable: %s", slack_error_code(error))
            return ()
        messages: list[Message] = []
        for item in sorted(raw, key=lambda m: ts_key(str(m.get("ts", "0")))):
            if ts_key(str(item.get("ts", "0"))) >= ts_key(before_ts):
                break
            message = self._to_message(item, bot_user_id=bot_user_id, bot_id=bot_id)
            if message is None:
                continue
            if messages and messages[-1].role == message.role:
                merged = f"{messages[-1].content}\n\n{message.content}"
                messages[-1] = Message(role=message.role, content=merged)
            else:
                messages.append(message)
        return tuple(messages[-self._max_messages :])

    async def replies(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The thread as `conversations.replies` returns it (parent first); raises `SlackApiError`."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            response = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, limit=_PAGE_SIZE, cursor=cursor, include_all_metadata=True
            )
            items.extend(response.get("messages") or [])
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return items

    @staticmethod
    def _to_message(item: dict[str, Any], *, bot_user_id: str, bot_id: str) -> Message | None:
        if item.get("subtype") not in _CONVERSATION_SUBTYPES and item.get("subtype") != "bot_message":
            return None
        is_ours = (bot_user_id and item.get("user") == bot_user_id) or (bot_id and item.get("bot_id") == bot_id)
        if not is_ours and (item.get("bot_id") or item.get("subtype") == "bot_message"):
            return None  # another bot's chatter is not part of this conversation
        metadata = item.get("metadata") or {}
        if is_ours and metadata.get("event_type") == QUESTION_EVENT_TYPE:
            question = read_user_text(str((metadata.get("event_payload") or {}).get("question") or ""))
            return Message(role=Role.USER, content=question) if question else None
        text = read_user_text(str(item.get("text") or ""), bot_user_id=bot_user_id)
        if not text:
            return None
        return Message(role=Role.ASSISTANT if is_ours else Role.USER, content=text)


__all__ = ["QUESTION_EVENT_TYPE", "ThreadHistoryLoader", "question_metadata", "ts_key"]
