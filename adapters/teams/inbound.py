"""Reading Teams activities: body validation, the question a message asks, a feedback submission.

Pure functions over `Activity` (no I/O), so every gate is unit-testable.
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

from microsoft_agents.activity import Activity
from pydantic import BaseModel, ConfigDict, ValidationError

from adapters.conversation import ConversationKey
from adapters.json_body import JsonBodyError, parse_json_body
from adapters.teams import labels
from adapters.teams.cards import FOLLOWUP_ACTION
from rag.text import normalize_text

ConversationKind = Literal["personal", "groupChat", "channel"]

# The mention's text is HTML-escaped (no `<` inside): `[^<]*` stops at the next tag, so unclosed `<at>`s cost
# one pass; `(.*?)` rescanned the rest of the text from each of them (64 KB blocked the event loop 4.5 s).
_MENTION_TAG = re.compile(r"<at>([^<]*)</at>", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"</?(?:p|div|br|li|ul|ol|tr|h[1-6]|blockquote)\b[^<>]*>", re.IGNORECASE)
_INLINE_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_LOOKUP_COMMAND = re.compile(rf"^{labels.LOOKUP_COMMAND}\s+(\S.*)$", re.DOTALL)
_LINE_BREAKS = re.compile(r"(?<![ \t])[ \t]*\n\s*")  # from a blank run's start only: linear


class TeamsQuestion(BaseModel):
    """A message addressed to the bot, normalised: mention stripped, NFC, with where it came from."""

    model_config = ConfigDict(frozen=True)

    text: str
    activity_id: str
    conversation_id: str
    kind: ConversationKind
    tenant: str = ""
    user: str = ""
    team: str = ""
    channel: str = ""
    lookup_command: bool = False  # asked with the `규정 <name> [제N조]` command: answered by lookup only

    @property
    def conversation_key(self) -> str:
        return ConversationKey.teams(self.tenant, self.conversation_id).text

    @property
    def is_personal(self) -> bool:
        return self.kind == "personal"


class FeedbackSubmission(BaseModel):
    """A 👍/👎 from Teams' feedback buttons (`message/submitAction` invoke)."""

    model_config = ConfigDict(frozen=True)

    rating: Literal["up", "down"]
    comment: str = ""
    message_id: str = ""  # the bot message the feedback is about
    conversation_key: str = ""
    user: str = ""


def activity_problem(body: object) -> str | None:
    """Why a request body is not an activity we can process, or None when it is.

    The SDK answers 500 for an activity without `type`; this lets the endpoint answer 400 instead.
    """
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    try:
        activity = Activity.model_validate(body)
    except ValidationError as error:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "body" for e in error.errors()})
        return f"invalid activity fields: {', '.join(fields)}"
    if not activity.type:
        return "the activity has no type"
    if not activity.conversation or not activity.conversation.id:
        return "the activity has no conversation.id"
    if activity.type in ("message", "invoke") and not (activity.service_url or "").startswith(("https://", "http://")):
        return "the activity has no serviceUrl to reply to"
    return None


def conversation_kind(activity: Activity) -> ConversationKind:
    conversation = activity.conversation
    kind = conversation.conversation_type if conversation else None
    if kind in ("personal", "groupChat", "channel"):
        return kind
    return "groupChat" if conversation and conversation.is_group else "personal"


def tenant_of(activity: Activity) -> str:
    if activity.conversation and activity.conversation.tenant_id:
        return activity.conversation.tenant_id
    tenant = _channel_data(activity).get("tenant")
    return str(tenant.get("id", "")) if isinstance(tenant, dict) else ""


def user_of(activity: Activity) -> str:
    sender = activity.from_property
    if not sender:
        return ""
    return sender.aad_object_id or sender.id or ""


def read_question(activity: Activity) -> TeamsQuestion | None:
    """The question a message activity asks the bot, or None when the message is not for the bot.

    In channels and group chats only @mentions of the bot (and presses of our follow-up buttons)
    count: with resource-specific consent Teams would deliver every message.
    """
    if activity.type != "message" or not activity.conversation or not activity.id:
        return None
    if activity.from_property and activity.recipient and activity.from_property.id == activity.recipient.id:
        return None
    kind = conversation_kind(activity)
    followup = _followup_question(activity.value)
    if followup is not None:
        text = followup
    else:
        if kind != "personal" and not activity.is_recipient_mentioned():
            return None
        text = _strip_recipient_mention(activity)
    text = normalize_text(text).strip()
    command = _LOOKUP_COMMAND.match(text)
    data = _channel_data(activity)
    return TeamsQuestion(
        # The command word is ours (the manifest's command list); the router recognises the reference.
        text=command.group(1) if command else text,
        activity_id=activity.id,
        conversation_id=activity.conversation.id,
        kind=kind,
        tenant=tenant_of(activity),
        user=user_of(activity),
        team=_nested_id(data, "team"),
        channel=_nested_id(data, "channel") if kind == "channel" else _base_conversation_id(activity),
        lookup_command=command is not None,
    )


def read_feedback(activity: Activity) -> FeedbackSubmission | None:
    """The feedback in a `message/submitAction` invoke, or None for any other action."""
    if activity.type != "invoke" or activity.name != "message/submitAction":
        return None
    value = activity.value if isinstance(activity.value, dict) else {}
    if value.get("actionName") != "feedback":
        return None
    action = value.get("actionValue") if isinstance(value.get("actionValue"), dict) else {}
    reaction = action.get("reaction")
    if reaction not in ("like", "dislike"):
        return None
    return FeedbackSubmission(
        rating="up" if reaction == "like" else "down",
        comment=_feedback_text(action.get("feedback")),
        message_id=activity.reply_to_id or "",
        conversation_key=ConversationKey.teams(tenant_of(activity), activity.conversation.id).text,
        user=user_of(activity),
    )


def _strip_recipient_mention(activity: Activity) -> str:
    # Work on a copy: the SDK helper rewrites `activity.text` in place.
    copy = activity.model_copy(deep=True)
    text = copy.remove_recipient_mention() if copy.recipient else (copy.text or "")
    # Teams may drop the mention entity's text (names with `&`), leaving the bot's `<at>` tag behind.
    bot_name = (activity.recipient.name or "").strip().lower() if activity.recipient else ""
    if bot_name:
        text = _MENTION_TAG.sub(
            lambda m: "" if html.unescape(m.group(1)).strip().lower() == bot_name else m.group(0), text
        )
    # Some clients send formatted posts as HTML; keep the words, drop the markup and &nbsp;.
    text = _INLINE_TAG.sub("", _BLOCK_TAG.sub("\n", text))
    text = html.unescape(text).replace("\xa0", " ")
    return _LINE_BREAKS.sub("\n", text)


def _followup_question(value: Any) -> str | None:
    if isinstance(value, str):
        try:
            value = parse_json_body(value)
        except JsonBodyError:
            return None
    if isinstance(value, dict) and value.get("action") == FOLLOWUP_ACTION:
        question = value.get("question")
        if isinstance(question, str) and question.strip():
            return question
    return None


def _feedback_text(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            raw = parse_json_body(raw)
        except JsonBodyError:
            return raw.strip()
    if isinstance(raw, dict):
        return str(raw.get("feedbackText", "")).strip()
    return ""


def _channel_data(activity: Activity) -> dict[str, Any]:
    data = activity.channel_data
    if isinstance(data, dict):
        return data
    dump = getattr(data, "model_dump", None)
    return dump(by_alias=True) if callable(dump) else {}


def _nested_id(data: dict[str, Any], key: str) -> str:
    item = data.get(key)
    return str(item.get("id", "")) if isinstance(item, dict) else ""


def _base_conversation_id(activity: Activity) -> str:
    return activity.conversation.id.split(";", 1)[0] if activity.conversation else ""


__all__ = [
    "ConversationKind",
    "FeedbackSubmission",
    "TeamsQuestion",
    "activity_problem",
    "conversation_kind",
    "read_feedback",
    "read_question",
]
