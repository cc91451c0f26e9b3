"""Slack e2e fixtures: a fake Slack Web API, our aiohttp server with the Slack adapter, signed requests.

Requests are signed the way Slack signs them (v0:timestamp:body, HMAC-SHA256 with the signing secret).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from slack_sdk.signature import SignatureVerifier

from adapters.slack import SlackAdapter
from tests.e2e.adapter_server import base_url, serve_adapter
from tests.e2e.fakes.slack_api import TEAM_ID, FakeSlackApi
from tests.e2e.slack.sample_answers import cited_answer
from tests.fakes.turn_service import FakeTurnService

SIGNING_SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
CHANNEL = "C0RULES"
DM_CHANNEL = "D0ASKER"
ASKER = "U0ASKER"
OTHER_USER = "U0OTHER"


@pytest.fixture(autouse=True)
def no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)


@dataclass
class SlackSender:
    """Plays Slack's side of the HTTP conversation: signed events, commands and button clicks."""

    url: str
    session: aiohttp.ClientSession
    slack: FakeSlackApi
    secret: str = SIGNING_SECRET
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def headers(self, body: str, *, timestamp: int | None = None, secret: str | None = None) -> dict[str, str]:
        ts = str(timestamp if timestamp is not None else int(time.time()))
        signature = SignatureVerifier(secret or self.secret).generate_signature(timestamp=ts, body=body)
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}

    async def post(
        self, body: str, content_type: str, *, headers: dict[str, str] | None = None, **signing: Any
    ) -> tuple[int, str]:
        all_headers = {"Content-Type": content_type, **self.headers(body, **signing), **(headers or {})}
        async with self.session.post(self.url + "/slack/events", data=body.encode(), headers=all_headers) as resp:
            return resp.status, await resp.text()

    def event_body(self, event: dict[str, Any], *, event_id: str | None = None) -> str:
        return json.dumps(
            {
                "token": "legacy",
                "team_id": TEAM_ID,
                "api_app_id": "A0REGBOT",
                "type": "event_callback",
                "event_id": event_id or f"Ev{next(self._ids):08d}",
                "event_time": int(time.time()),
                "event": event,
            },
            ensure_ascii=False,
        )

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry_num: int | None = None, **signing: Any
    ) -> tuple[int, str]:
        headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"} if retry_num else {}
        body = self.event_body(event, event_id=event_id)
        return await self.post(body, "application/json", headers=headers, **signing)

    def mention(self, text: str, *, channel: str = CHANNEL, user: str = ASKER, thread_ts: str = "") -> dict[str, Any]:
        """An app_mention event for a message the fake workspace now holds."""
        return self._message_event("app_mention", text, channel=channel, user=user, thread_ts=thread_ts)

    def message(
        self, text: str, *, channel: str = CHANNEL, user: str = ASKER, thread_ts: str = "", channel_type: str = ""
    ) -> dict[str, Any]:
        """A message event (channel_type `im` for a DM) for a message the fake workspace now holds."""
        event = self._message_event("message", text, channel=channel, user=user, thread_ts=thread_ts)
        event["channel_type"] = channel_type or ("im" if channel.startswith("D") else "channel")
        return event

    def _message_event(self, kind: str, text: str, *, channel: str, user: str, thread_ts: str) -> dict[str, Any]:
        stored = self.slack.user_says(channel, text, user=user, thread_ts=thread_ts)
        event = {"type": kind, "user": user, "text": text, "ts": stored.ts, "channel": channel, "event_ts": stored.ts}
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    async def command(self, text: str, *, command: str = "/regulation", hook: str = "cmd1") -> tuple[int, str]:
        body = urlencode(
            {
                "token": "legacy",
                "team_id": TEAM_ID,
                "team_domain": "regbot-test",
                "channel_id": CHANNEL,
                "channel_name": "rules",
                "user_id": ASKER,
                "user_name": "asker",
                "command": command,
                "text": text,
                "api_app_id": "A0REGBOT",
                "response_url": self.slack.response_url(hook),
                "trigger_id": f"trigger-{next(self._ids)}",
            }
        )
        return await self.post(body, "application/x-www-form-urlencoded")

    async def click(
        self,
        button: dict[str, Any],
        *,
        channel: str = CHANNEL,
        user: str = ASKER,
        message: dict[str, Any] | None = None,
        hook: str = "click1",
    ) -> tuple[int, str]:
        payload: dict[str, Any] = {
            "type": "block_actions",
            "team": {"id": TEAM_ID, "domain": "regbot-test"},
            "user": {"id": user, "team_id": TEAM_ID},
            "api_app_id": "A0REGBOT",
            "channel": {"id": channel, "name": "rules"},
            "trigger_id": f"trigger-{next(self._ids)}",
            "response_url": self.slack.response_url(hook),
            "actions": [
                {
                    "type": "button",
                    "action_id": button["action_id"],
                    "block_id": "regbot",
                    "value": button.get("value", ""),
                    "text": button.get("text"),
                    "action_ts": str(time.time()),
                }
            ],
        }
        if message is not None:
            payload["container"] = {"type": "message", "message_ts": message["ts"], "channel_id": channel}
            payload["message"] = message
        else:
            payload["container"] = {"type": "message", "is_ephemeral": True, "channel_id": channel}
        body = urlencode({"payload": json.dumps(payload, ensure_ascii=False)})
        return await self.post(body, "application/x-www-form-urlencoded")

    async def get(self, path: str) -> int:
        async with self.session.get(self.url + path) as resp:
            return resp.status


@dataclass
class SlackServer:
    """Our server under test, what it talks to, and a sender that plays Slack."""

    adapter: SlackAdapter
    slack: FakeSlackApi
    service: FakeTurnService
    send: SlackSender


@pytest.fixture
async def slack_api() -> AsyncIterator[FakeSlackApi]:
    async with FakeSlackApi() as slack:
        yield slack


StartServer = Callable[..., Awaitable[SlackServer]]


@pytest.fixture
async def start_slack_server(slack_api: FakeSlackApi) -> AsyncIterator[StartServer]:
    """Starts our aiohttp app with the Slack adapter in front of a FakeTurnService; kwargs go to the adapter."""
    started: list[tuple[TestServer, SlackAdapter]] = []
    session = aiohttp.ClientSession()

    async def start(**adapter_kwargs: Any) -> SlackServer:
        service = FakeTurnService(cited_answer)
        settings: dict[str, Any] = {
            "bot_token": BOT_TOKEN,
            "signing_secret": SIGNING_SECRET,
            "api_url": slack_api.api_url,
        }
        settings.update(adapter_kwargs)
        adapter = SlackAdapter(service, **settings)
        server = await serve_adapter(adapter)
        started.append((server, adapter))
        return SlackServer(adapter, slack_api, service, SlackSender(base_url(server), session, slack_api))

    yield start
    for server, adapter in started:
        await adapter.close()
        await server.close()
    await session.close()


@pytest.fixture
async def slack_server(start_slack_server: StartServer) -> SlackServer:
    return await start_slack_server()
