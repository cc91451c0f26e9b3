"""Before answering a Slack retry, look in the thread for the answer the bot already posted.

Slack retries an event it thinks we missed (`X-Slack-Retry-Num`). Normally the dedupe claim drops it, but
while Redis is down (or after it restarted empty) a replica cannot know what another one claimed; the
thread itself is the state every replica still shares (DESIGN.md §3 "Exactly-once while Redis is down").
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.errors import slack_error_code
from adapters.slack.history import QUESTION_EVENT_TYPE, ThreadHistoryLoader, ts_key
from adapters.slack.inbound import BotIdentity

logger = logging.getLogger(__name__)


def retry_number(headers: dict[str, Any]) -> int:
    """`X-Slack-Retry-Num` of a request (bolt keeps header values in lists); 0 for a first delivery."""
    raw = headers.get("x-slack-retry-num") or [""]
    value = raw[0] if isinstance(raw, list | tuple) else raw
    return int(value) if str(value).isdigit() else 0


def _is_bot_answer(message: dict[str, Any], bot: BotIdentity) -> bool:
    ours = (bot.user_id and message.get("user") == bot.user_id) or (bot.bot_id and message.get("bot_id") == bot.bot_id)
    # A question the bot posted for a person (a clicked follow-up) is not an answer.
    return bool(ours) and (message.get("metadata") or {}).get("event_type") != QUESTION_EVENT_TYPE


async def answered_in_thread(client: AsyncWebClient, event: dict[str, Any], bot: BotIdentity) -> bool:
    """True when the bot replied to the message of `event` (after it, before anyone's next message).

    A thread Slack cannot read is treated as unanswered: answering twice beats never.
    """
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    if event.get("type") not in ("app_mention", "message") or not channel or not ts:
        return False
    try:
        thread = await ThreadHistoryLoader(client).replies(channel, str(event.get("thread_ts") or ts))
    except SlackApiError as error:
        logger.warning("slack retry check could not read the thread: %s", slack_error_code(error))
        return False
    for message in sorted(thread, key=lambda m: ts_key(str(m.get("ts", "0")))):
        if ts_key(str(message.get("ts", "0"))) <= ts_key(ts):
            continue
        if _is_bot_answer(message, bot):
            return True
        if message.get("user") and not message.get("bot_id"):
            return False  # someone spoke next: what follows answers them
    return False


__all__ = ["answered_in_thread", "retry_number"]
