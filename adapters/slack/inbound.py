"""Slack payloads read into typed questions: who asks what, where the answer goes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from adapters.conversation import ConversationKey

# Message subtypes that are a person writing; edits, deletions, joins and bots are not questions.
QUESTION_SUBTYPES = {None, "thread_broadcast", "file_share"}


class BotIdentity(BaseModel):
    """The bot as `auth.test` describes it; its own messages are answers, never questions."""

    model_config = ConfigDict(frozen=True)

    user_id: str = ""
    bot_id: str = ""


class SlackQuestion(BaseModel):
    """One question asked in Slack, answered in the thread `thread_ts` of `channel`."""

    model_config = ConfigDict(frozen=True)

    team: str
    channel: str
    user: str
    text: str  # as Slack sent it (mrkdwn with <@…> tokens and &amp; escapes)
    ts: str
    thread_ts: str
    is_direct: bool = False

    @property
    def conversation_key(self) -> str:
        return ConversationKey.slack(self.team, self.channel, self.thread_ts).text

    @property
    def is_thread_reply(self) -> bool:
        return self.thread_ts != self.ts

    @classmethod
    def from_message_event(cls, event: dict[str, Any], *, team: str) -> SlackQuestion:
        """An `app_mention` or `message` event; a top-level message opens a thread of its own."""
        ts = str(event.get("ts") or "")
        return cls(
            team=team,
            channel=str(event.get("channel") or ""),
            user=str(event.get("user") or ""),
            text=str(event.get("text") or ""),
            ts=ts,
            thread_ts=str(event.get("thread_ts") or ts),
            is_direct=event.get("channel_type") == "im",
        )


class ButtonClick(BaseModel):
    """A click on one of our buttons, read from a `block_actions` payload."""

    model_config = ConfigDict(frozen=True)

    team: str
    channel: str
    user: str
    value: str  # the clicked button's value
    message: dict[str, Any]  # the message the button is on; empty under a private (ephemeral) answer

    @property
    def thread_ts(self) -> str:
        """The thread of the message the button is on ("" without a message)."""
        return str(self.message.get("thread_ts") or self.message.get("ts") or "")

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> ButtonClick:
        action = (body.get("actions") or [{}])[0]
        return cls(
            team=team_of(body),
            channel=str((body.get("channel") or {}).get("id") or ""),
            user=str((body.get("user") or {}).get("id") or ""),
            value=str(action.get("value") or ""),
            message=body.get("message") or {},
        )


def is_person_message(event: dict[str, Any]) -> bool:
    """A message a person wrote: no bot, no edit, no deletion, no join."""
    return event.get("subtype") in QUESTION_SUBTYPES and not event.get("bot_id")


def team_of(body: dict[str, Any]) -> str:
    """The workspace of an event, command or interaction payload."""
    team = body.get("team")
    if isinstance(team, dict):
        return str(team.get("id") or "")
    return str(body.get("team_id") or team or (body.get("user") or {}).get("team_id") or "")


__all__ = ["QUESTION_SUBTYPES", "BotIdentity", "ButtonClick", "SlackQuestion", "is_person_message", "team_of"]
