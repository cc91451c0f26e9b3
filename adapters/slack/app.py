"""The Slack app: bolt wiring for events, the slash command and buttons, over HTTP or Socket Mode.

    adapter = SlackAdapter(service, bot_token=..., signing_secret=..., api_url=settings.slack_api_url)
    adapter.attach(web_app)              # POST /slack/events: events, commands, interactivity
    await adapter.start_socket_mode()    # only when an app-level token (xapp-…) is configured
    ...
    await adapter.stop_intake()          # shutdown: Socket Mode disconnects, new events get 503, answers go on
    await adapter.close()                # then: answers still running get a short grace, then are cancelled

The signature is verified on the raw body before anything parses it (401 on a bad or stale one, whatever the
bytes), a signed body that is not a Slack payload is a 400; bolt then answers url_verification and ssl_check,
and acks events before any listener runs; listeners hand the work to background tasks, so the HTTP answer never
waits for an answer to be written. Duplicates are dropped by `event_id` (Slack retries) and by
(channel, ts) (a mention arrives as both `app_mention` and `message`), and still acked. After
`stop_intake()` new requests are refused with 503 and not acked, so Slack delivers them to another replica.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import TurnService
from adapters.slack.buttons import ButtonHandlers
from adapters.slack.history import ThreadHistoryLoader
from adapters.slack.inbound import BotIdentity, SlackQuestion, is_person_message, team_of
from adapters.slack.payloads import FEEDBACK_DOWN_ACTION, FEEDBACK_UP_ACTION, FOLLOWUP_ACTION, SHARE_ACTION
from adapters.slack.records import RecentAnswers
from adapters.slack.responder import CommandResponder, Respond, ThreadResponder
from adapters.slack.retries import answered_in_thread, retry_number
from adapters.slack.sanitize import mentions_user
from adapters.slack.signature import SlackSignature
from adapters.slack.status import Sleep
from adapters.slack.streaming import AnswerStreamerFactory, StreamMode
from adapters.text import sanitize_untrusted
from rag import messages
from rag.errors import ConfigError
from rag.lang import detect_language, framing_for

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
DEFAULT_COMMANDS = ("/regulation",)
_CLOSE_GRACE_S = 5.0


class DuplicateEventFilter(AsyncMiddleware):
    """Drops a redelivered event (same `event_id`), or a retry already answered in its thread, and still acks it,
    so Slack stops retrying."""

    def __init__(self, service: TurnService) -> None:
        self._service = service

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        event_id = req.body.get("event_id") if req.body.get("type") == "event_callback" else None
        if not event_id:
            return await next()
        try:
            first = await self._service.claim_event(f"slack:event:{event_id}")
        except Exception:
            # Better a rare double answer than a lost question when the dedupe store is down.
            logger.exception("slack event dedupe unavailable; processing %s", event_id)
            return await next()
        retry = retry_number(req.headers)
        if first and retry and await self._answered_already(req):
            logger.info("slack event %s (retry %d) was answered in its thread already; acked and dropped",
                        event_id, retry)
            return await req.context.ack()
        if first:
            return await next()
        logger.info("slack event %s is a duplicate (retry %s); acked and dropped", event_id, retry or "-")
        return await req.context.ack()

    @staticmethod
    async def _answered_already(req: AsyncBoltRequest) -> bool:
        """A retry's claim can be new while Redis is down or lost: the thread says if it was answered."""
        event, context = req.body.get("event") or {}, req.context
        if context.client is None:
            return False
        bot = BotIdentity(user_id=context.bot_user_id or "", bot_id=context.bot_id or "")
        return await answered_in_thread(context.client, event, bot)


class IntakeGate(AsyncMiddleware):
    """Refuses every request once intake has stopped: a 503 over HTTP, no ack over Socket Mode.

    Runs before the dedupe claim, so Slack's redelivery to another replica is not dropped as a duplicate.
    """

    def __init__(self) -> None:
        self.open = True

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        if self.open:
            return await next()
        logger.info("slack %s refused: shutting down", req.body.get("type") or "request")
        return BoltResponse(status=503, body="shutting down", headers={"Retry-After": "1"})


def _bot_identity(context: AsyncBoltContext) -> BotIdentity:
    return BotIdentity(user_id=context.bot_user_id or "", bot_id=context.bot_id or "")


class SlackAdapter:
    """Regbot in Slack: mentions, DMs, assistant threads, `/regulation`, follow-up/feedback/share buttons.

    Args:
        service: the bot service; answers come only from `service.answer(turn)`.
        bot_token: the bot token (xoxb-…).
        signing_secret: verifies HTTP requests from Slack.
        api_url: the Web API base URL (`SLACK_API_URL`).
        stream_mode: `auto` (native streaming, else chat.update), `native` or `update`.
        app_token: the app-level token (xapp-…) for Socket Mode; empty for HTTP only.
        clock: monotonic seconds, for the streaming and status cadence.
        wall_clock: Unix seconds, for the freshness of request signatures.
        sleep: waits that many seconds of `clock` (a held-back status line waits with it).
        max_question_chars: longer questions get a friendly refusal instead of an answer.
        commands: slash commands answered (as configured in the app manifest).
    """

    def __init__(
        self,
        service: TurnService,
        *,
        bot_token: str,
        signing_secret: str,
        api_url: str,
        stream_mode: StreamMode = "auto",
        app_token: str = "",
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
        max_question_chars: int = 4000,
        commands: tuple[str, ...] = DEFAULT_COMMANDS,
    ) -> None:
        if not bot_token:
            raise ConfigError("SLACK_BOT_TOKEN is required for the Slack adapter")
        if not signing_secret and not app_token:
            raise ConfigError("SLACK_SIGNING_SECRET is required to verify Slack's HTTP requests")
        self._service = service
        self._app_token = app_token
        self._signature = SlackSignature(signing_secret, clock=wall_clock) if signing_secret else None
        base_url = api_url if api_url.endswith("/") else api_url + "/"

        def web_client(*retry_handlers: AsyncRetryHandler) -> AsyncWebClient:
            return AsyncWebClient(token=bot_token, base_url=base_url, retry_handlers=list(retry_handlers))

        self._client = web_client(
            AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=3)
        )
        # Status lines and intermediate edits: a 429 drops the call instead of holding the answer for Retry-After.
        self._best_effort_client = web_client(AsyncConnectionErrorRetryHandler())
        recent = RecentAnswers()
        streamers = AnswerStreamerFactory(
            self._client, mode=stream_mode, best_effort_client=self._best_effort_client, clock=clock, sleep=sleep
        )
        self._threads = ThreadResponder(
            service,
            self._client,
            streamers=streamers,
            history=ThreadHistoryLoader(self._client),
            recent=recent,
            max_question_chars=max_question_chars,
        )
        self._commands = CommandResponder(service, recent=recent, max_question_chars=max_question_chars)
        self._buttons = ButtonHandlers(service, self._client, threads=self._threads, streamers=streamers, recent=recent)
        self._tasks: set[asyncio.Task[None]] = set()
        self._socket_mode: AsyncSocketModeHandler | None = None
        self._intake = IntakeGate()
        self._app = AsyncApp(
            client=self._client,
            signing_secret=signing_secret,
            process_before_response=False,
            name="regbot",
        )
        self._register(commands)

    def attach(self, app: web.Application) -> None:
        """Serve `POST /slack/events` (events, slash commands, interactivity) on `app`."""
        app.router.add_post(EVENTS_PATH, self._handle_http)

    async def start_socket_mode(self) -> None:
        """Connect over Socket Mode with the app-level token; returns once connected."""
        if not self._app_token:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (an app-level xapp- token)")
        self._ensure_session()
        self._socket_mode = AsyncSocketModeHandler(self._app, self._app_token)
        await self._socket_mode.connect_async()

    async def stop_intake(self) -> None:
        """Take no new events (Socket Mode disconnects, requests get 503); answers in progress go on."""
        self._intake.open = False
        if self._socket_mode is not None:
            socket_mode, self._socket_mode = self._socket_mode, None
            await socket_mode.close_async()

    async def close(self) -> None:
        """Stop intake, let answers in progress finish (briefly), cancel the rest, close the HTTP session."""
        await self.stop_intake()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=_CLOSE_GRACE_S)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._client.session is not None and not self._client.session.closed:
            await self._client.session.close()

    def _ensure_session(self) -> None:
        """One pooled HTTP session for Web API calls (created in the running loop, on first use)."""
        if self._client.session is None or self._client.session.closed:
            self._client.session = aiohttp.ClientSession()
        self._best_effort_client.session = self._client.session

    async def _handle_http(self, request: web.Request) -> web.Response:
        body = await request.read()  # bounded by the application's client_max_size (413 past it)
        signed = self._signature is not None and self._signature.verify(
            body, request.headers.get("X-Slack-Request-Timestamp"), request.headers.get("X-Slack-Signature")
        )
        if not signed:
            return web.json_response({"error": "invalid request"}, status=401)  # bolt's own answer to a bad one
        text = body.decode("utf-8")  # a verified body is UTF-8
        try:
            payload = parse_body(text, request.content_type)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return web.json_response({"error": "the body is not a Slack payload"}, status=400)
        self._ensure_session()
        bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=request.headers)  # type: ignore[arg-type]
        return await to_aiohttp_response(await self._app.async_dispatch(bolt_request))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("slack background work failed", exc_info=task.exception())

    # --- listeners ----------------------------------------------------------------------------

    def _register(self, commands: tuple[str, ...]) -> None:
        app = self._app
        app.use(self._intake)
        app.use(DuplicateEventFilter(self._service))
        app.event("app_mention")(self._on_app_mention)
        app.event("message")(self._on_message)
        app.event("assistant_thread_started")(self._on_assistant_thread_started)
        app.event("assistant_thread_context_changed")(self._on_nothing_to_do)
        app.event("app_home_opened")(self._on_nothing_to_do)
        for command in commands:
            app.command(command)(self._on_command)
        app.action(FOLLOWUP_ACTION)(self._on_followup)
        app.action(FEEDBACK_UP_ACTION)(self._on_feedback)
        app.action(FEEDBACK_DOWN_ACTION)(self._on_feedback)
        app.action(SHARE_ACTION)(self._on_share)

    async def _on_app_mention(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext) -> None:
        if not is_person_message(event):
            return
        question = SlackQuestion.from_message_event(event, team=context.team_id or team_of(body))
        self._spawn(self._threads.answer(question, _bot_identity(context)))

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext) -> None:
        if not is_person_message(event):
            return  # bots, edits, deletions, joins
        bot = _bot_identity(context)
        question = SlackQuestion.from_message_event(event, team=context.team_id or team_of(body))
        if question.is_direct or mentions_user(question.text, bot.user_id):
            self._spawn(self._threads.answer(question, bot))
        elif question.is_thread_reply:
            self._spawn(self._answer_if_our_thread(question, bot))

    async def _answer_if_our_thread(self, question: SlackQuestion, bot: BotIdentity) -> None:
        """A reply without a mention is a follow-up only in a thread the bot is already answering in."""
        if await self._service.has_history(question.conversation_key):
            await self._threads.answer(question, bot)

    async def _on_assistant_thread_started(self, event: dict[str, Any], client: AsyncWebClient) -> None:
        thread = event.get("assistant_thread") or {}
        if thread.get("channel_id") and thread.get("thread_ts"):
            self._spawn(self._greet(client, str(thread["channel_id"]), str(thread["thread_ts"])))

    async def _greet(self, client: AsyncWebClient, channel: str, thread_ts: str) -> None:
        await client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=sanitize_untrusted(messages.CHITCHAT_GREETING)
        )

    async def _on_nothing_to_do(self) -> None:
        """Subscribed so Slack gets a 200; nothing to show."""

    async def _on_command(self, ack: Callable[..., Awaitable[Any]], command: dict[str, Any], respond: Respond) -> None:
        problem = self._commands.problem(str(command.get("text") or ""))
        if problem:
            await ack(text=sanitize_untrusted(problem), response_type="ephemeral")
            return
        said = framing_for(detect_language(str(command.get("text") or "")))
        await ack(text=sanitize_untrusted(said.STATUS_SEARCHING), response_type="ephemeral")
        self._spawn(self._commands.answer(command, respond))

    async def _on_followup(
        self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        await ack()
        self._spawn(self._buttons.on_followup(body, _bot_identity(context)))

    async def _on_feedback(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any], respond: Respond) -> None:
        await ack()
        action_id = ((body.get("actions") or [{}])[0]).get("action_id")
        rating = "up" if action_id == FEEDBACK_UP_ACTION else "down"
        self._spawn(self._buttons.on_feedback(body, rating, respond))

    async def _on_share(
        self,
        ack: Callable[..., Awaitable[Any]],
        body: dict[str, Any],
        respond: Respond,
        context: AsyncBoltContext,
    ) -> None:
        await ack()
        self._spawn(self._buttons.on_share(body, respond, _bot_identity(context)))


__all__ = ["EVENTS_PATH", "DuplicateEventFilter", "IntakeGate", "SlackAdapter"]
