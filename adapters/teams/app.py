"""The Teams adapter: `POST /api/messages` on the Microsoft 365 Agents SDK, answers in the background.

    adapter = TeamsAdapter(service, app_id=..., app_password=..., tenant_id=..., allow_anonymous=False)
    adapter.attach(app)          # adds POST /api/messages to an aiohttp Application
    ...
    await adapter.close()        # on shutdown: lets running answers finish, then cancels them

The SDK answers the HTTP request only after the turn has run, and the Bot Connector gives up after
15 s. So the turn only validates, dedupes and schedules: the answer is produced by a background task
in a proactive continuation of the conversation (the SDK's connector client, fresh credentials).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit
from uuid import uuid4

from aiohttp import web
from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import ChannelAdapter, TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity
from pydantic import BaseModel, ConfigDict

from adapters.answered import RecentlyAnswered
from adapters.base import Feedback, ScopeRequest, TurnService
from adapters.json_body import JsonBodyError, parse_json_body
from adapters.teams import cards
from adapters.teams.auth import TeamsAuth
from adapters.teams.delivery import Clock, SystemClock
from adapters.teams.inbound import (
    TeamsQuestion,
    activity_problem,
    conversation_kind,
    read_feedback,
    read_question,
)
from adapters.teams.sender import TurnContextSender
from adapters.teams.streaming import PersonalChatStreamer, RenderOutcome, ThreadReplyRenderer
from rag import messages
from rag.lang import detect_language
from rag.models import Citation, Route, Turn

logger = logging.getLogger(__name__)

MESSAGES_ROUTE = "/api/messages"


class TeamsRenderOptions(BaseModel):
    """How answers are rendered; the defaults follow Teams' documented limits."""

    model_config = ConfigDict(frozen=True)

    stream_in_personal_chat: bool = True
    stream_min_interval_s: float = 1.2  # Teams allows one streaming request a second
    stream_budget_s: float = 100.0  # the final message must land within Teams' 2-minute stream limit
    edit_placeholder_in_threads: bool = True
    thread_update_interval_s: float = 2.0
    max_text_chars: int = 20_000  # ~40 KB of UTF-16, well inside Teams' ~100 KB message limit


class AnsweredMessage(BaseModel):
    """What one bot message answered."""

    model_config = ConfigDict(frozen=True)

    question: str
    answer: str
    citations: tuple[Citation, ...] = ()
    turn_id: str = ""  # the answered Turn, so feedback joins its turn record


class AnsweredMessages(RecentlyAnswered[AnsweredMessage]):
    """Bot message id → what it answered: Teams' feedback invoke names only the message."""


class BackgroundAnswers:
    """The answers being produced after their HTTP requests were acknowledged."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, job: Coroutine[Any, Any, None], *, name: str) -> None:
        task = asyncio.get_running_loop().create_task(job, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("Teams answer task %s failed", task.get_name(), exc_info=task.exception())

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def close(self, *, grace_s: float) -> None:
        """Wait up to `grace_s` for running answers, then cancel the rest."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


class TeamsAgent:
    """The SDK agent: routes one incoming activity (messages, feedback invokes); answers nothing inline."""

    def __init__(
        self,
        service: TurnService,
        *,
        clock: Clock,
        options: TeamsRenderOptions,
        answers: BackgroundAnswers,
        answered: AnsweredMessages,
    ) -> None:
        self._service = service
        self._clock = clock
        self._options = options
        self._answers = answers
        self._answered = answered

    async def on_turn(self, context: TurnContext) -> None:
        activity = context.activity
        if activity.type == ActivityTypes.message:
            await self._on_message(context)
        elif activity.type == ActivityTypes.invoke:
            await self._on_invoke(context)
        elif activity.type == ActivityTypes.conversation_update:
            await self._on_conversation_update(context)

    async def _on_message(self, context: TurnContext) -> None:
        question = read_question(context.activity)
        if question is None:
            logger.debug("Ignored a Teams message not addressed to the bot")
            return
        if not await self._service.claim_event(f"teams:{question.conversation_id}:{question.activity_id}"):
            logger.info("Ignored a duplicate Teams activity %s", question.activity_id)
            return

        async def answer(proactive: TurnContext) -> None:
            await self.answer(proactive, question)

        self._continue_later(context, answer, name=f"teams-answer-{question.activity_id}")

    async def _on_conversation_update(self, context: TurnContext) -> None:
        """Greets a user who installs the bot for a personal chat (Teams' guidance for bots)."""
        activity = context.activity
        bot_id = activity.recipient.id if activity.recipient else None
        added = [member.id for member in activity.members_added or []]
        if conversation_kind(activity) != "personal" or bot_id is None or bot_id not in added:
            return
        if not await self._service.claim_event(f"teams:{activity.conversation.id}:welcome"):
            return

        async def greet(proactive: TurnContext) -> None:
            await TurnContextSender(proactive).send(cards.plain_message(messages.CHITCHAT_GREETING))

        self._continue_later(context, greet, name=f"teams-welcome-{activity.conversation.id}", as_reply=False)

    def _continue_later(
        self,
        context: TurnContext,
        work: Callable[[TurnContext], Awaitable[None]],
        *,
        name: str,
        as_reply: bool = True,
    ) -> None:
        """Run `work` after this turn, in a proactive continuation of its conversation."""
        adapter: ChannelAdapter = context.adapter
        identity = context.identity or ClaimsIdentity()
        reference = context.activity.get_conversation_reference()
        continuation = reference.get_continuation_activity()
        # With an id, what `work` sends replies to this activity (in a channel: into its thread);
        # without one it is posted to the conversation.
        continuation.id = reference.activity_id if as_reply else None
        self._answers.start(adapter.continue_conversation_with_claims(identity, continuation, work), name=name)

    async def answer(self, context: TurnContext, question: TeamsQuestion) -> None:
        """Ask the service and render its events into the conversation of `context`."""
        sender = TurnContextSender(context)
        try:
            turn = await self._turn_for(question)
            language = detect_language(turn.text)  # the card's labels follow the question (rag/lang)
            renderer: PersonalChatStreamer | ThreadReplyRenderer
            if question.is_personal and self._options.stream_in_personal_chat:
                renderer = PersonalChatStreamer(
                    sender,
                    clock=self._clock,
                    min_interval_s=self._options.stream_min_interval_s,
                    stream_budget_s=self._options.stream_budget_s,
                    max_text_chars=self._options.max_text_chars,
                    language=language,
                )
            else:
                renderer = ThreadReplyRenderer(
                    sender,
                    clock=self._clock,
                    edit_placeholder=self._options.edit_placeholder_in_threads,
                    update_interval_s=self._options.thread_update_interval_s,
                    max_text_chars=self._options.max_text_chars,
                    language=language,
                )
            outcome = await renderer.render(self._service.answer(turn))
        except Exception:
            logger.exception("Answering Teams activity %s failed", question.activity_id)
            await _apologise(sender)
            return
        self._remember(question, outcome, turn.turn_id)
        logger.info(
            "Teams turn %s answered in %s (delivered=%s, route=%s)",
            turn.turn_id,
            question.kind,
            outcome.delivered,
            outcome.answer.route if outcome.answer else "-",
        )

    async def _turn_for(self, question: TeamsQuestion) -> Turn:
        # No history in the turn: Teams cannot list past messages, so the service loads its own store.
        scope = await self._service.scope_for(
            ScopeRequest(
                platform="teams",
                workspace=question.tenant,
                team=question.team,
                channel=question.channel,
                is_direct=question.is_personal,
            )
        )
        return Turn(
            turn_id=uuid4().hex,
            text=question.text,
            user=question.user,
            conversation_key=question.conversation_key,
            scope=scope,
            # The `규정 <name> [제N조]` command asks for that text: a reference that is not found says so.
            force_route=Route.LOOKUP if question.lookup_command else None,
        )

    def _remember(self, question: TeamsQuestion, outcome: RenderOutcome, turn_id: str) -> None:
        if outcome.delivered and outcome.message_id and outcome.answer is not None:
            answered = AnsweredMessage(
                question=question.text, answer=outcome.answer.text, citations=outcome.answer.citations,
                turn_id=turn_id,
            )
            self._answered.remember(outcome.message_id, answered)

    async def _on_invoke(self, context: TurnContext) -> None:
        submission = read_feedback(context.activity)
        if submission is None:
            return  # the SDK answers 501 for invokes nobody handled
        answered = self._answered.get(submission.message_id)
        feedback = Feedback(
            platform="teams",
            conversation_key=submission.conversation_key,
            user=submission.user,
            rating=submission.rating,
            question=answered.question if answered else "",
            answer=answered.answer if answered else "",
            citations=answered.citations if answered else (),
            comment=submission.comment,
            turn_id=answered.turn_id if answered else "",
        )
        try:
            await self._service.record_feedback(feedback)
        except Exception:
            # Teams shows an error toast for a failed invoke; losing one vote is the lesser harm.
            logger.exception("Recording Teams feedback failed")
        # Teams wants 200 with an empty body (a body makes it show an error).
        ok = InvokeResponse(status=200)
        await context.send_activity(Activity(type=ActivityTypes.invoke_response, value=ok))


async def _apologise(sender: TurnContextSender) -> None:
    try:
        await sender.send({"type": "message", "text": messages.INTERNAL_ERROR})
    except Exception:
        logger.exception("Could not even send the apology to Teams")


class _CheckedRequest:
    """The request as the SDK's `process_request` reads it, after our own auth and body checks."""

    method = "POST"

    def __init__(self, request: web.Request, body: dict[str, Any], identity: ClaimsIdentity) -> None:
        self.headers = request.headers
        self._body = body
        self._identity = identity

    async def json(self) -> dict[str, Any]:
        return self._body

    def get_claims_identity(self) -> ClaimsIdentity:
        return self._identity

    def get_path_param(self, name: str) -> str:
        raise KeyError(name)


class TeamsAdapter:
    """Microsoft Teams on the Microsoft 365 Agents SDK: `POST /api/messages` in our aiohttp app.

    Args:
        service: the bot service (dedupe, history, scope, answers, feedback).
        app_id, app_password, tenant_id: the single-tenant Azure Bot registration
            (MICROSOFT_APP_ID / MICROSOFT_APP_PASSWORD / MICROSOFT_APP_TENANT_ID).
        allow_anonymous: accept requests without a token; honoured only when `app_id` is empty.
        clock: time source for stream throttling and backoff.
        options: rendering limits (stream pace, edit interval, message size).
        shutdown_grace_s: how long `close()` lets running answers finish.
        openid_metadata_url: verify tokens with the keys this OpenID metadata names instead of Microsoft's
            (TEAMS_OPENID_METADATA_URL: a sovereign cloud, or a local fake in tests).
    """

    def __init__(
        self,
        service: TurnService,
        *,
        app_id: str,
        app_password: str,
        tenant_id: str,
        allow_anonymous: bool,
        clock: Clock | None = None,
        options: TeamsRenderOptions | None = None,
        shutdown_grace_s: float = 10.0,
        openid_metadata_url: str = "",
    ) -> None:
        self._auth = TeamsAuth(
            app_id=app_id, app_password=app_password, tenant_id=tenant_id, allow_anonymous=allow_anonymous,
            openid_metadata_url=openid_metadata_url,
        )
        self._cloud = CloudAdapter(
            connection_manager=self._auth.connections(), host_validator=self._auth.host_validator()
        )
        self._cloud.on_turn_error = self._on_turn_error
        self._answers = BackgroundAnswers()
        self._agent = TeamsAgent(
            service,
            clock=clock or SystemClock(),
            options=options or TeamsRenderOptions(),
            answers=self._answers,
            answered=AnsweredMessages(),
        )
        self._shutdown_grace_s = shutdown_grace_s

    @property
    def answers_in_progress(self) -> int:
        return self._answers.running

    def attach(self, app: web.Application) -> None:
        """Add `POST /api/messages` to `app`."""
        app.router.add_post(MESSAGES_ROUTE, self.handle)

    async def close(self) -> None:
        """Let running answers finish (up to the grace period), then cancel them."""
        await self._answers.close(grace_s=self._shutdown_grace_s)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Authenticate, validate and acknowledge one activity; answers follow in the background."""
        if self._auth.mode == "anonymous":
            refused = _anonymous_request_problem(request)
            if refused is not None:
                logger.info("Refused an anonymous Teams request: %s", refused[1])
                return web.json_response({"error": refused[1]}, status=refused[0])
        identity = await self._auth.authenticate(request.headers.get("Authorization"))
        if identity is None:
            return web.json_response({"error": "unauthorized"}, status=401)
        try:
            body = parse_json_body(await request.read())
        except web.HTTPRequestEntityTooLarge:
            return web.json_response({"error": "the activity is too large"}, status=413)
        except JsonBodyError as bad:
            return web.json_response({"error": str(bad)}, status=400)
        problem = activity_problem(body) or self._place_problem(body)
        if problem:
            logger.info("Rejected a Teams request: %s", problem)
            return web.json_response({"error": problem}, status=400)
        try:
            result = await self._cloud.process_request(_CheckedRequest(request, body, identity), self._agent)
        except Exception:
            logger.exception("Processing a Teams activity failed")
            return web.json_response({"error": "internal error"}, status=500)
        if result.body is not None:
            return web.json_response(result.body, status=result.status_code, headers=result.headers)
        return web.Response(status=result.status_code, headers=result.headers)

    def _place_problem(self, body: dict[str, Any]) -> str | None:
        """What binds the activity to this deployment: Teams, our tenant, and (anonymous) a local emulator."""
        if self._auth.mode == "anonymous":
            if not _is_loopback_url(body.get("serviceUrl")):
                return "anonymous mode answers only a local emulator (serviceUrl on 127.0.0.1 or localhost)"
            return None
        if body.get("channelId") != "msteams":
            return "channelId must be msteams"
        conversation = body.get("conversation") if isinstance(body.get("conversation"), dict) else {}
        tenant = conversation.get("tenantId")
        if self._auth.tenant_id and tenant is not None and str(tenant).lower() != self._auth.tenant_id.lower():
            return "the activity is from another tenant"
        if self._auth.tenant_id:
            # Scopes read the tenant: the one the registration is bound to, never a body's claim of another.
            conversation["tenantId"] = self._auth.tenant_id
        return None

    async def _on_turn_error(self, context: TurnContext, error: Exception) -> None:
        # Replaces the SDK default, which sends the exception text to the user.
        logger.error("Teams turn failed: %s", type(error).__name__, exc_info=error)
        if context.activity.type == ActivityTypes.message:
            await _apologise(TurnContextSender(context))


def _anonymous_request_problem(request: web.Request) -> tuple[int, str] | None:
    """Anonymous mode is for a local emulator: a web page must not be able to drive it (a simple cross-site
    `text/plain` POST needs no CORS preflight), so JSON only and no foreign Origin."""
    if request.content_type != "application/json":
        return 415, "send the activity as application/json"
    origin = request.headers.get("Origin")
    if origin is not None and not _is_loopback_url(origin):
        return 403, "cross-site requests are not accepted"
    return None


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _is_loopback_url(url: object) -> bool:
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host in _LOOPBACK_NAMES


__all__ = ["MESSAGES_ROUTE", "TeamsAdapter", "TeamsAgent", "TeamsRenderOptions"]
