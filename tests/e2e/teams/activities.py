"""Factories for Teams activities as the Bot Connector posts them (trimmed to the fields we read)."""

from __future__ import annotations

import json
from typing import Any

TENANT = "72f988bf-0000-4000-8000-00000000t001"
BOT = {"id": "28:regbot-app-id", "name": "RegBot"}
USER = {"id": "29:user-kim", "name": "김민지", "aadObjectId": "aad-kim"}
PERSONAL_CONVERSATION = "a:1personal-kim"
TEAM = "19:hr-team@thread.tacv2"
CHANNEL = "19:general@thread.tacv2"


def personal_message(text: str, *, service_url: str, activity_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": activity_id,
        "channelId": "msteams",
        "serviceUrl": service_url,
        "from": USER,
        "recipient": BOT,
        "conversation": {"id": PERSONAL_CONVERSATION, "conversationType": "personal", "tenantId": TENANT},
        "channelData": {"tenant": {"id": TENANT}},
        "text": text,
        "textFormat": "plain",
        "locale": "ko-KR",
        **extra,
    }


def channel_thread_id(root_message_id: str) -> str:
    return f"{CHANNEL};messageid={root_message_id}"


def channel_message(
    text: str, *, service_url: str, activity_id: str, root_message_id: str, mention: bool = True
) -> dict[str, Any]:
    """A channel post (or thread reply); with `mention` it @mentions the bot as Teams does."""
    entities: list[dict[str, Any]] = []
    if mention:
        text = f"<at>{BOT['name']}</at> {text}"
        entities.append({"type": "mention", "mentioned": BOT, "text": f"<at>{BOT['name']}</at>"})
    activity: dict[str, Any] = {
        "type": "message",
        "id": activity_id,
        "channelId": "msteams",
        "serviceUrl": service_url,
        "from": USER,
        "recipient": BOT,
        "conversation": {
            "id": channel_thread_id(root_message_id),
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": TENANT,
        },
        "channelData": {
            "tenant": {"id": TENANT},
            "team": {"id": TEAM},
            "channel": {"id": CHANNEL},
            "teamsTeamId": TEAM,
            "teamsChannelId": CHANNEL,
        },
        "text": text,
        "entities": entities,
    }
    if root_message_id != activity_id:
        activity["replyToId"] = root_message_id  # a reply in the thread
    return activity


def followup_press(
    question: str, *, service_url: str, activity_id: str, conversation: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What Teams posts when a follow-up (messageBack) button is pressed: text plus the parsed value."""
    activity = personal_message(question, service_url=service_url, activity_id=activity_id)
    if conversation is not None:
        activity["conversation"] = conversation
    activity["value"] = {"action": "regbot.followup", "question": question}
    return activity


def feedback_invoke(
    reaction: str, *, service_url: str, activity_id: str, reply_to_id: str, comment: str = ""
) -> dict[str, Any]:
    activity = personal_message("", service_url=service_url, activity_id=activity_id)
    activity.update(
        {
            "type": "invoke",
            "name": "message/submitAction",
            "replyToId": reply_to_id,
            "value": {
                "actionName": "feedback",
                "actionValue": {"reaction": reaction, "feedback": json.dumps({"feedbackText": comment})},
            },
        }
    )
    del activity["text"]
    return activity
