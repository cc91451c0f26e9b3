"""Plays Slack against a real regbot server: signed event deliveries in, the fake Web API's record out.

Used by the production-service integration tests and by `benchmarks/load.py`. The fake Web API itself is
`tests/e2e/fakes/slack_api.py`; `TimedSlackApi` only adds arrival times to what it records.

    async with TimedSlackApi() as slack, aiohttp.ClientSession() as http:
        sender = SlackEventSender(http, signing_secret=SIGNING_SECRET)
        event = mention(slack, "연차는 며칠이야?", channel="C0HR")
        await sender.deliver(server_url, event_callback(event))
        final = await slack.wait_for(lambda: slack.answered("C0HR", event["ts"]))
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from tests.e2e.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackApi

SIGNING_SECRET = "integration-signing-secret"
BOT_TOKEN = "xoxb-integration-token"
ASKER = "U0ASKER"

_event_ids = itertools.count(1)

# Web API methods through which a person sees the bot react in a thread.
VISIBLE_METHODS = frozenset({"assistant.threads.setStatus", "chat.postMessage", "chat.startStream"})
ANSWER_METHODS = frozenset({"chat.postMessage", "chat.startStream"})


def slack_env(api_url: str) -> dict[str, str]:
    """The environment (Settings aliases) that points a regbot server at a fake Slack Web API."""
    return {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": api_url}


def mention(slack: FakeSlackApi, question: str, *, channel: str, user: str = ASKER) -> dict[str, Any]:
    """An `app_mention` event for a channel message the fake workspace now holds."""
    text = f"<@{BOT_USER_ID}> {question}"
    message = slack.user_says(channel, text, user=user)
    return {"type": "app_mention", "user": user, "text": text, "ts": message.ts, "channel": channel,
            "event_ts": message.ts}


def as_channel_message(event: dict[str, Any]) -> dict[str, Any]:
    """The `message` event Slack also sends for the same channel mention."""
    return {**event, "type": "message", "channel_type": "channel"}


def event_callback(event: dict[str, Any], *, event_id: str = "", team: str = TEAM_ID) -> str:
    """The JSON body of an Events API delivery."""
    return json.dumps(
        {"token": "legacy", "team_id": team, "api_app_id": "A0REGBOT", "type": "event_callback",
         "event_id": event_id or f"EvInt{next(_event_ids):08d}", "event_time": int(time.time()), "event": event},
        ensure_ascii=False,
    )


@dataclass
class SlackEventSender:
    """Signs bodies as Slack does (v0:timestamp:body, HMAC-SHA256) and posts them to `/slack/events`."""

    http: aiohttp.ClientSession
    signing_secret: str = SIGNING_SECRET

    async def deliver(self, server_url: str, body: str, *, retry_num: int = 0) -> int:
        """POST one delivery (Slack's `retry_num`-th retry of it when > 0); returns our server's HTTP status."""
        timestamp = str(int(time.time()))
        signature = SignatureVerifier(self.signing_secret).generate_signature(timestamp=timestamp, body=body)
        headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": timestamp,
                   "X-Slack-Signature": signature}
        if retry_num:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        async with self.http.post(f"{server_url}/slack/events", data=body.encode(), headers=headers) as response:
            await response.read()
            return response.status


@dataclass(frozen=True)
class TimedCall:
    """A Web API call as the fake received it: when (monotonic seconds), which method, which thread."""

    at: float
    method: str
    channel: str
    thread_ts: str


class TimedSlackApi(FakeSlackApi):
    """The fake Slack Web API, also noting when each call arrived and when each thread got its final answer."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.timed: list[TimedCall] = []
        self.finished_at: dict[tuple[str, str], float] = {}

    async def _api(self, request: web.Request) -> web.Response:
        arrived = time.monotonic()
        response = await super()._api(request)
        call = self.calls[-1]
        channel = str(call.args.get("channel") or call.args.get("channel_id") or "")
        thread_ts = str(call.args.get("thread_ts") or "")
        if not thread_ts and call.args.get("ts"):  # chat.update and chat.*Stream name the message, not the thread
            message = self.messages.get((channel, str(call.args["ts"])))
            thread_ts = message.thread_ts if message else ""
        self.timed.append(TimedCall(arrived, call.method, channel, thread_ts))
        if thread_ts and (channel, thread_ts) not in self.finished_at and self.answered(channel, thread_ts):
            self.finished_at[(channel, thread_ts)] = time.monotonic()
        return response

    def first_visible_at(self, channel: str, thread_ts: str) -> float | None:
        """When the asker first saw the bot react in the thread (status, placeholder or stream)."""
        return next((c.at for c in self.timed if c.method in VISIBLE_METHODS
                     and (c.channel, c.thread_ts) == (channel, thread_ts)), None)

    def answers_started(self, channel: str, thread_ts: str) -> int:
        """How many answer messages (posted or streamed) the bot began in the thread."""
        return sum(1 for c in self.calls if c.method in ANSWER_METHODS and c.ok
                   and (str(c.args.get("channel")), str(c.args.get("thread_ts") or "")) == (channel, thread_ts))


__all__ = [
    "ASKER",
    "BOT_TOKEN",
    "SIGNING_SECRET",
    "SlackEventSender",
    "TimedCall",
    "TimedSlackApi",
    "as_channel_message",
    "event_callback",
    "mention",
    "slack_env",
]
