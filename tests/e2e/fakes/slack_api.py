"""A fake Slack Web API on 127.0.0.1 that records every call and answers like Slack.

Stateful where the bot depends on state: messages get increasing `ts` values, streams go through
startStream → appendStream → stopStream (appending to a stopped stream fails with
`message_not_in_streaming_state`, chat.update of a live stream with `streaming_state_conflict`),
`conversations.replies` returns what was posted in a thread. `response_url`s and a Socket Mode
websocket (`apps.connections.open` → `/socket`, `socket_send`, `socket_acks`) live on the same server.
Faults are switchable: `rate_limit(method, times, retry_after_s=0)` answers 429 with that `Retry-After`,
`fail(method, error)` answers `ok: false`, `streaming=False` makes `chat.startStream` an unknown method.

    async with FakeSlackApi() as slack:
        adapter = SlackAdapter(service, bot_token="xoxb-test", signing_secret=..., api_url=slack.api_url)
        ...
        final = await slack.wait_for(lambda: slack.answered(channel, thread_ts))
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from aiohttp import web
from aiohttp.test_utils import TestServer

T = TypeVar("T")

BOT_USER_ID = "UREGBOT"
BOT_ID = "BREGBOT"
TEAM_ID = "T0REGBOT"
_JSON_FIELDS = ("blocks", "metadata", "chunks", "attachments", "loading_messages", "prompts")


@dataclass(frozen=True)
class SlackCall:
    """One Web API request the bot made, and how the fake answered it."""

    method: str
    args: dict[str, Any]
    status: int = 200
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error


@dataclass
class FakeMessage:
    """A message as the fake workspace holds it."""

    channel: str
    ts: str
    text: str = ""
    thread_ts: str = ""
    user: str = ""
    bot_id: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    streamed: str = ""  # markdown sent through chat.*Stream
    streaming: bool = False

    @property
    def answer_text(self) -> str:
        """What a reader sees as the message body: streamed markdown, markdown blocks, else text."""
        if self.streamed:
            return self.streamed
        markdown = [str(b.get("text", "")) for b in self.blocks if b.get("type") == "markdown"]
        return "\n\n".join(markdown) if markdown else self.text

    @property
    def context_text(self) -> str:
        """The text of context blocks (sources, questions)."""
        return "\n".join(
            str(e.get("text", "")) for b in self.blocks if b.get("type") == "context" for e in b.get("elements", [])
        )

    def buttons(self, block_id: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for b in self.blocks
            if b.get("type") == "actions" and (block_id is None or b.get("block_id") == block_id)
            for e in b.get("elements", [])
        ]

    def as_slack(self) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.answer_text}
        if self.thread_ts:
            message["thread_ts"] = self.thread_ts
        if self.user:
            message["user"] = self.user
        if self.bot_id:
            message["bot_id"] = self.bot_id
        if self.blocks:
            message["blocks"] = self.blocks
        if self.metadata:
            message["metadata"] = self.metadata
        return message


class FakeSlackApi:
    """The Slack Web API and response URLs, recording every request."""

    def __init__(self, *, streaming: bool = True, require_recipient: bool = True) -> None:
        self.streaming = streaming
        self.require_recipient = require_recipient
        self.calls: list[SlackCall] = []
        self.responses: list[tuple[str, dict[str, Any]]] = []  # (response_url id, payload)
        self.messages: dict[tuple[str, str], FakeMessage] = {}
        self.ephemeral: list[dict[str, Any]] = []
        self._ts = itertools.count(1)
        self._rate_limits: dict[str, tuple[int, int]] = {}  # method → (calls left to refuse, Retry-After s)
        self._failures: dict[str, list[str]] = {}
        self.socket_acks: list[dict[str, Any]] = []  # what Socket Mode clients sent back
        self._sockets: list[web.WebSocketResponse] = []
        self._server: TestServer | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> FakeSlackApi:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{hook}", self._response_url)
        app.router.add_get("/socket", self._socket)
        app.on_shutdown.append(self._close_sockets)
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._server is not None:
            await self._server.close()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "use `async with FakeSlackApi()`"
        return str(self._server.make_url("")).rstrip("/")

    @property
    def api_url(self) -> str:
        return self.base_url + "/api/"

    def response_url(self, hook: str) -> str:
        return f"{self.base_url}/response/{hook}"

    # --- Socket Mode --------------------------------------------------------------------------

    @property
    def socket_connected(self) -> bool:
        return any(not ws.closed for ws in self._sockets)

    async def socket_send(self, envelope: dict[str, Any]) -> None:
        """Deliver an envelope (events_api, slash_commands, interactive) over every open socket."""
        for ws in self._sockets:
            if not ws.closed:
                await ws.send_json(envelope)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0REGBOT"}})
        async for message in ws:
            if message.type == web.WSMsgType.TEXT:
                self.socket_acks.append(json.loads(message.data))
        return ws

    async def _close_sockets(self, _: web.Application) -> None:
        for ws in self._sockets:
            await ws.close()

    # --- faults -------------------------------------------------------------------------------

    def rate_limit(self, method: str, *, times: int, retry_after_s: int = 0) -> None:
        """Answer the next `times` calls of `method` with HTTP 429 and `Retry-After: retry_after_s`."""
        self._rate_limits[method] = (times, retry_after_s)

    def fail(self, method: str, error: str, *, times: int = 1) -> None:
        """Answer the next `times` calls of `method` with `{"ok": false, "error": error}`."""
        self._failures.setdefault(method, []).extend([error] * times)

    # --- the workspace ------------------------------------------------------------------------

    def new_ts(self) -> str:
        n = next(self._ts)
        return f"{1_760_000_000 + n}.{n:06d}"

    def user_says(self, channel: str, text: str, *, user: str, thread_ts: str = "") -> FakeMessage:
        """A person's message, stored as Slack would before delivering its event."""
        message = FakeMessage(channel=channel, ts=self.new_ts(), text=text, thread_ts=thread_ts, user=user)
        self.messages[(channel, message.ts)] = message
        return message

    def bot_says(self, channel: str, text: str, *, thread_ts: str = "") -> FakeMessage:
        """A message the bot posted earlier (e.g. before a restart)."""
        return self._bot_message({"channel": channel, "thread_ts": thread_ts}, text=text)

    def thread(self, channel: str, thread_ts: str) -> list[FakeMessage]:
        """The parent and its replies, oldest first."""
        found = [m for m in self.messages.values() if m.channel == channel and thread_ts in (m.ts, m.thread_ts)]
        return sorted(found, key=lambda m: tuple(int(p) for p in m.ts.split(".")))

    def bot_replies(self, channel: str, thread_ts: str) -> list[FakeMessage]:
        return [m for m in self.thread(channel, thread_ts) if m.bot_id == BOT_ID and m.ts != thread_ts]

    def last_reply(self, channel: str, thread_ts: str) -> FakeMessage | None:
        replies = self.bot_replies(channel, thread_ts)
        return replies[-1] if replies else None

    def answered(self, channel: str, thread_ts: str) -> FakeMessage | None:
        """The bot's last reply in the thread once it carries its feedback buttons (the answer is final)."""
        last = self.last_reply(channel, thread_ts)
        if last is None or last.streaming or not any(b.get("block_id") == "regbot_feedback" for b in last.blocks):
            return None
        return last

    def calls_to(self, method: str) -> list[SlackCall]:
        return [c for c in self.calls if c.method == method]

    def posted_text(self) -> str:
        """Every text the bot sent anywhere (messages, streams, ephemeral, responses), as raw JSON."""
        sent = [c.args for c in self.calls if c.method.startswith(("chat.", "assistant."))]
        sent += [payload for _, payload in self.responses]
        return json.dumps(sent, ensure_ascii=False)

    async def wait_for(self, condition: Callable[[], T | None], *, timeout_s: float = 10.0) -> T:
        """Poll `condition` until it returns something truthy; fail after `timeout_s`."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            value = condition()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                methods = [c.method for c in self.calls]
                raise AssertionError(f"condition not met within {timeout_s}s; calls so far: {methods}")
            await asyncio.sleep(0.02)

    # --- HTTP ---------------------------------------------------------------------------------

    async def _response_url(self, request: web.Request) -> web.Response:
        self.responses.append((request.match_info["hook"], await request.json()))
        return web.Response(text="ok")

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._read_args(request)
        times, retry_after_s = self._rate_limits.get(method, (0, 0))
        if times > 0:
            self._rate_limits[method] = (times - 1, retry_after_s)
            self.calls.append(SlackCall(method, args, status=429, error="ratelimited"))
            headers = {"Retry-After": str(retry_after_s)}
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429, headers=headers)
        if self._failures.get(method):
            error = self._failures[method].pop(0)
            self.calls.append(SlackCall(method, args, error=error))
            return web.json_response({"ok": False, "error": error})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        body = handler(args) if handler else {"ok": True}
        self.calls.append(SlackCall(method, args, error="" if body.get("ok") else str(body.get("error"))))
        return web.json_response(body)

    @staticmethod
    async def _read_args(request: web.Request) -> dict[str, Any]:
        if request.method == "GET":
            args: dict[str, Any] = dict(request.query)
        elif request.content_type == "application/json":
            args = await request.json()
        else:
            args = dict(parse_qsl(await request.text()))
            for name in _JSON_FIELDS:
                if isinstance(args.get(name), str):
                    try:
                        args[name] = json.loads(args[name])
                    except json.JSONDecodeError:
                        pass
        return args

    # --- methods ------------------------------------------------------------------------------

    def _auth_test(self, _: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://regbot-test.slack.com/",
            "team": "regbot test",
            "user": "regbot",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
        }

    def _bot_message(self, args: dict[str, Any], **fields: Any) -> FakeMessage:
        message = FakeMessage(
            channel=str(args["channel"]),
            ts=self.new_ts(),
            thread_ts=str(args.get("thread_ts") or ""),
            user=BOT_USER_ID,
            bot_id=BOT_ID,
            **fields,
        )
        self.messages[(message.channel, message.ts)] = message
        return message

    def _apps_connections_open(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": self.base_url.replace("http://", "ws://") + "/socket"}

    def _chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._bot_message(
            args, text=str(args.get("text") or ""), blocks=args.get("blocks") or [], metadata=args.get("metadata")
        )
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": message.as_slack()}

    def _chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get((str(args.get("channel")), str(args.get("ts"))))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if message.streaming:
            return {"ok": False, "error": "streaming_state_conflict"}
        message.text = str(args.get("text") or "")
        message.blocks = args.get("blocks") or []
        message.streamed = ""  # an update replaces the streamed body
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    @staticmethod
    def _stream_text(args: dict[str, Any]) -> str:
        text = str(args.get("markdown_text") or "")
        for chunk in args.get("chunks") or []:
            if chunk.get("type") == "markdown_text":
                text += str(chunk.get("text") or "")
        return text

    def _chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        if not self.streaming:
            return {"ok": False, "error": "unknown_method"}
        if not args.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if self.require_recipient and str(args.get("channel", "")).startswith("C"):
            if not args.get("recipient_team_id"):
                return {"ok": False, "error": "missing_recipient_team_id"}
            if not args.get("recipient_user_id"):
                return {"ok": False, "error": "missing_recipient_user_id"}
        message = self._bot_message(args, streamed=self._stream_text(args), streaming=True)
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _live_stream(self, args: dict[str, Any]) -> FakeMessage | dict[str, Any]:
        message = self.messages.get((str(args.get("channel")), str(args.get("ts"))))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        return message

    def _chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._live_stream(args)
        if isinstance(message, dict):
            return message
        message.streamed += self._stream_text(args)
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._live_stream(args)
        if isinstance(message, dict):
            return message
        message.streamed += self._stream_text(args)
        message.blocks = args.get("blocks") or []
        message.streaming = False
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": message.as_slack()}

    def _chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        self.ephemeral.append(args)
        return {"ok": True, "message_ts": self.new_ts()}

    def _conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        thread = self.thread(str(args.get("channel")), str(args.get("ts")))
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": [m.as_slack() for m in thread], "has_more": False}


__all__ = ["BOT_ID", "BOT_USER_ID", "TEAM_ID", "FakeMessage", "FakeSlackApi", "SlackCall"]
