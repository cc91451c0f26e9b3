"""The web playground: a page where administrators try regbot in a browser before registering a chat app.

    adapter = WebPlaygroundAdapter(service, lookup_article=article_chunks)
    adapter.attach(app)          # GET /, the page's static files and /api/playground/*

Every route answers only under the host names the playground is published as (`public_hosts`, loopback names
by default): both `Host` and, when a browser sends it, `Origin` must name one, or the answer is 403. A page on
an attacker's domain that resolves to this server (DNS rebinding) therefore gets nothing.

Routes (all read-only; questions go through `TurnService.answer`, which applies the rate limits):
    GET  /                              the page (labels from `labels.py`, no build step, no framework)
    POST /api/playground/ask            JSON {question, conversation_id, user_id} → text/event-stream,
                                        one `event: <kind>` frame per AnswerEvent (delta text regrouped where a
                                        link could span two); `X-Regbot-Turn` names the turn and
                                        `X-Regbot-Language` the question's language as its letters read (the
                                        page's labels until the answer comes: the `done` event's
                                        `answer.language`, the understanding's, then wins)
    POST /api/playground/feedback       JSON {conversation_id, user_id, turn_id, rating} → 👍/👎 recorded
    GET  /api/playground/article        ?doc=..&article=.. → the cited article's text (404 when unknown)
    GET  /api/playground/history        ?conversation_id=.. → the tab's stored conversation (after a reload)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit
from uuid import uuid4

from aiohttp import web
from pydantic import BaseModel, Field, ValidationError

from adapters.base import Feedback, ScopeRequest, TurnService
from adapters.conversation import ConversationKey
from adapters.json_body import JsonBodyError, parse_json_body
from adapters.text import StreamSanitizer, neutralize_untrusted
from adapters.web.article import article_view
from adapters.web.events import SSE_CONTENT_TYPE, encode_event
from adapters.web.inbound import (
    MAX_BODY_BYTES,
    ArticleRequest,
    AskRequest,
    BrowserId,
    FeedbackRequest,
)
from adapters.web.page import STATIC_FILES, STATIC_PREFIX, page_config, render_page, static_text
from adapters.web.records import AnsweredTurn, AnsweredTurns
from adapters.web.session import PlaygroundBudget, PlaygroundSessions
from rag import messages
from rag.lang import detect_language, framing_for
from rag.models import AnswerEvent, AnswerEventKind, Chunk, Scope, Turn

logger = logging.getLogger(__name__)

ASK_ROUTE = "/api/playground/ask"
FEEDBACK_ROUTE = "/api/playground/feedback"
ARTICLE_ROUTE = "/api/playground/article"
HISTORY_ROUTE = "/api/playground/history"
UNLOCK_ROUTE = "/api/playground/unlock"
ACCESS_REQUIRED = "access code required"
TURN_HEADER = "X-Regbot-Turn"
# The question's language (rag/lang): the page frames the answer's buttons and captions in it.
LANGUAGE_HEADER = "X-Regbot-Language"

# The article text for a reference (`취업규칙 제20조`) within a scope; empty when it names no article.
ArticleLookup = Callable[[str, Scope], Sequence[Chunk]]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

# Scripts, styles and requests only from this server; the page is never framed.
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class _BadRequest(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class WebPlaygroundAdapter:
    """The playground page and its JSON/SSE endpoints, rendering the same AnswerEvents as Slack and Teams.

    Args:
        service: the bot service (scope, answers with rate limits and history, feedback).
        lookup_article: the structural lookup for a citation's article; without it the side panel shows only
            the quoted text.
        remembered_answers: how many answers are kept per process for feedback to name.
        public_hosts: host names (no port) the page is served under (`REGBOT_PUBLIC_HOSTS`).
        examples: the page's example questions (drawn from what is indexed; default: the samples' ones).
        sessions: the signed session cookie the user id comes from (a random key per process by default).
        budget: questions a minute per client address and in all (by default 20 and 120).
        access_code: a shared code a published playground asks for once per session
            (`REGBOT_PLAYGROUND_ACCESS_CODE`); the API answers 401 without it. Empty: no code.
    """

    def __init__(
        self,
        service: TurnService,
        *,
        lookup_article: ArticleLookup | None = None,
        remembered_answers: int = 2000,
        public_hosts: Sequence[str] = LOOPBACK_HOSTS,
        examples: Sequence[str] = (),
        sessions: PlaygroundSessions | None = None,
        budget: PlaygroundBudget | None = None,
        access_code: str = "",
    ) -> None:
        self._public_hosts = frozenset(host.strip().strip("[]").lower() for host in public_hosts if host.strip())
        if not self._public_hosts:
            raise ValueError("public_hosts needs at least one host name (REGBOT_PUBLIC_HOSTS)")
        self._service = service
        self._access_code = access_code
        self._sessions = sessions or PlaygroundSessions()
        self._budget = budget or PlaygroundBudget(per_address_per_min=20, total_per_min=120)
        self._lookup_article = lookup_article
        self._answered = AnsweredTurns(capacity=remembered_answers)
        api = {"ask": ASK_ROUTE, "feedback": FEEDBACK_ROUTE, "article": ARTICLE_ROUTE, "history": HISTORY_ROUTE,
               "unlock": UNLOCK_ROUTE}
        self._page = render_page(page_config(api=api, articles=lookup_article is not None), examples=examples)
        self._static = {name: static_text(name) for name in STATIC_FILES}

    def attach(self, app: web.Application) -> None:
        """Add the page, its static files and the playground API to `app`."""
        app.router.add_get("/", self._published(self.index))
        for name in STATIC_FILES:
            app.router.add_get(f"{STATIC_PREFIX}/{name}", self._published(self.static))
        app.router.add_post(ASK_ROUTE, self._published(self._unlocked(self.ask)))
        app.router.add_post(FEEDBACK_ROUTE, self._published(self._unlocked(self.feedback)))
        app.router.add_get(ARTICLE_ROUTE, self._published(self._unlocked(self.article)))
        app.router.add_get(HISTORY_ROUTE, self._published(self._unlocked(self.history)))
        app.router.add_post(UNLOCK_ROUTE, self._published(self.unlock))

    def _published(self, handler: Handler) -> Handler:
        return published_only(handler, self._public_hosts)

    def _unlocked(self, handler: Handler) -> Handler:
        """401 for a session that has not entered the access code (when one is set)."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            if not self._sessions.has_access(request, self._sessions.of(request), self._access_code):
                return web.json_response({"error": ACCESS_REQUIRED, "access": "required"}, status=401)
            return await handler(request)

        return guarded

    async def close(self) -> None:
        """Nothing to release: aiohttp's graceful shutdown lets streaming answers finish, then cancels them."""

    # --- page -----------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        response = web.Response(text=self._page, content_type="text/html", charset="utf-8",
                                headers=_SECURITY_HEADERS)
        self._sessions.attach(response, self._sessions.of(request))
        return response

    async def static(self, request: web.Request) -> web.Response:
        name = request.path.rsplit("/", 1)[-1]
        return web.Response(text=self._static[name], content_type=STATIC_FILES[name], charset="utf-8",
                            headers=_SECURITY_HEADERS)

    # --- API ------------------------------------------------------------------

    async def ask(self, request: web.Request) -> web.StreamResponse:
        """Stream the answer to one question as Server-Sent Events."""
        try:
            asked = await _read_json(request, AskRequest)
        except _BadRequest as bad:
            return _error(bad.status, bad.reason)
        session = self._sessions.of(request)
        scope = await self._service.scope_for(ScopeRequest(platform="web", is_direct=True))
        turn = Turn(
            turn_id=uuid4().hex,
            text=asked.text,
            user=session.user,  # the server's session, never the body's user_id
            conversation_key=ConversationKey.web(asked.conversation_id).text,
            scope=scope,
        )
        response = web.StreamResponse(
            headers={
                "Content-Type": f"{SSE_CONTENT_TYPE}; charset=utf-8",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",  # proxies such as nginx would otherwise hold the stream back
                TURN_HEADER: turn.turn_id,
                LANGUAGE_HEADER: detect_language(turn.text),
            }
        )
        self._sessions.attach(response, session)
        await response.prepare(request)
        # Counted before any wait for the conversation's lock: a client that drops its cookie or changes
        # address per request is still held to the address and playground budgets.
        wait_s = self._budget.take(request.remote or "")
        try:
            if wait_s:
                logger.info("web turn %s: over the playground budget", turn.turn_id)
                seconds = max(1, math.ceil(wait_s))
                await response.write(encode_event(AnswerEvent.error(messages.RATE_LIMITED.format(seconds=seconds))))
            else:
                await self._stream(turn, response)
        except ConnectionResetError:
            # The tab was closed or reloaded mid-answer; closing the events ended the turn and freed its lock.
            logger.info("web turn %s: the browser left before the end of the answer", turn.turn_id)
            return response
        await response.write_eof()
        return response

    async def _stream(self, turn: Turn, response: web.StreamResponse) -> None:
        # The page sets text with textContent (no markup to escape); tokens, script links and broadcasts are
        # neutralised by the rules Slack and Teams follow.
        sanitizer = StreamSanitizer(neutralize_untrusted)
        async with contextlib.aclosing(self._service.answer(turn)) as events:
            async for event in events:
                if event.kind == AnswerEventKind.DELTA:
                    event = event.model_copy(update={"text": sanitizer.feed(event.text)})
                    if not event.text:
                        continue
                else:
                    tail = sanitizer.flush()
                    if tail:
                        await response.write(encode_event(AnswerEvent.delta(tail)))
                if event.kind == AnswerEventKind.DONE and event.answer is not None:
                    event = AnswerEvent.done(
                        event.answer.model_copy(update={"text": neutralize_untrusted(event.answer.text)})
                    )
                    # Remembered before the page can show the 👍/👎 buttons of this answer.
                    self._answered.remember(turn.turn_id, AnsweredTurn(
                        conversation_key=turn.conversation_key, user=turn.user, question=turn.text,
                        answer=event.answer.text, citations=event.answer.citations, language=event.answer.language,
                    ))
                await response.write(encode_event(event))

    async def feedback(self, request: web.Request) -> web.Response:
        """Record a 👍/👎 through the service, as Slack and Teams do; one vote per answer and user."""
        try:
            vote = await _read_json(request, FeedbackRequest)
        except _BadRequest as bad:
            return _error(bad.status, bad.reason)
        key = ConversationKey.web(vote.conversation_id).text
        session = self._sessions.of(request)
        answered = self._answered.get(vote.turn_id)
        if answered is None or answered.conversation_key != key or answered.user != session.user:
            # Only the session that asked may rate a turn (its id and conversation are no secret).
            return _error(403, "only the session that asked may rate this answer")
        thanks = framing_for(answered.language or detect_language(answered.question)).FEEDBACK_THANKS
        if not await self._service.claim_event(f"web:feedback:{vote.turn_id}:{session.session_id}"):
            return web.json_response({"recorded": False, "message": thanks})
        await self._service.record_feedback(Feedback(
            platform="web",
            conversation_key=key,
            user=session.user,
            rating=vote.rating,
            question=answered.question,
            answer=answered.answer,
            citations=answered.citations,
            comment=vote.comment,
            turn_id=vote.turn_id,
        ))
        return web.json_response({"recorded": True, "message": thanks})

    async def unlock(self, request: web.Request) -> web.Response:
        """Check the shared access code once; the session's cookies then remember it."""
        try:
            entered = await _read_json(request, _UnlockRequest)
        except _BadRequest as bad:
            return _error(bad.status, bad.reason)
        if not self._access_code:
            return web.json_response({"unlocked": True})
        # Each attempt counts against the address's and the playground's question budget: no fast guessing.
        wait_s = self._budget.take(request.remote or "")
        if wait_s:
            return web.json_response({"error": "too many attempts"}, status=429,
                                     headers={"Retry-After": str(max(1, math.ceil(wait_s)))})
        if not hmac.compare_digest(entered.code.strip().encode(), self._access_code.encode()):
            logger.info("playground: a wrong access code")
            return web.json_response({"error": "wrong access code", "access": "required"}, status=401)
        response = web.json_response({"unlocked": True})
        self._sessions.grant_access(response, self._sessions.of(request), self._access_code)
        return response

    async def article(self, request: web.Request) -> web.Response:
        """The article a citation names, within the playground's scope."""
        try:
            wanted = ArticleRequest.model_validate(dict(request.query))
        except ValidationError:
            return _error(400, "doc is required (article optional), e.g. ?doc=취업규칙&article=제20조")
        not_found = messages.LOOKUP_NOT_FOUND.format(query=wanted.reference)
        if self._lookup_article is None:
            return web.json_response({"error": not_found}, status=404)
        scope = await self._service.scope_for(ScopeRequest(platform="web", is_direct=True))
        chunks = await asyncio.to_thread(self._lookup_article, wanted.reference, scope)
        view = article_view(chunks)
        if view is None:
            return web.json_response({"error": not_found}, status=404)
        return web.json_response(view.model_dump(mode="json"))

    async def history(self, request: web.Request) -> web.Response:
        """The tab's conversation as stored by the service, so a reloaded page shows it again."""
        try:
            wanted = _HistoryRequest.model_validate(dict(request.query))
        except ValidationError:
            return _error(400, "conversation_id must be 8-64 letters, digits, '-' or '_'")
        stored = await self._service.history(ConversationKey.web(wanted.conversation_id).text)
        shown = [m.model_copy(update={"content": neutralize_untrusted(m.content)}) for m in stored]
        return web.json_response({"messages": [m.model_dump(mode="json") for m in shown]})


class _UnlockRequest(BaseModel):
    code: str = Field(max_length=200)


class _HistoryRequest(BaseModel):
    conversation_id: BrowserId


Model = TypeVar("Model", bound=BaseModel)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def published_only(handler: Handler, public_hosts: frozenset[str]) -> Handler:
    """`handler`, answering only when Host (and Origin, if sent) name a host of `public_hosts` (DNS rebinding)."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        names = [_host_name("//" + request.host)] + ([_host_name(origin)] if origin is not None else [])
        if not all(name in public_hosts for name in names):
            return _error(403, "this host name is not one the page is published under")
        return await handler(request)

    return guarded


def _host_name(url: str) -> str:
    """The host name of a URL or `//host:port`, lower-case, without port or IPv6 brackets; "" when unreadable."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return ""


async def _read_json(request: web.Request, model: type[Model]) -> Model:
    """The request's JSON body as `model`; refuses other origins, other content types and oversized bodies."""
    if not _same_origin(request):
        raise _BadRequest(403, "cross-origin requests are not accepted")
    if request.content_type != "application/json":
        raise _BadRequest(415, "send the body as application/json")
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise _BadRequest(413, "the request body is too large")
    body = await request.read()  # a chunked body is bounded by the application's client_max_size
    if len(body) > MAX_BODY_BYTES:
        raise _BadRequest(413, "the request body is too large")
    try:
        return model.model_validate(parse_json_body(body))
    except (JsonBodyError, ValidationError):
        raise _BadRequest(400, f"the body does not match {model.__name__}") from None


def _same_origin(request: web.Request) -> bool:
    # JSON-only POSTs already need a CORS preflight from another site; checking Origin closes the rest.
    origin = request.headers.get("Origin")
    if not origin:
        return True  # not a browser cross-site request (curl, tests)
    return urlsplit(origin).netloc == request.host


def _error(status: int, reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=status)


__all__ = [
    "ARTICLE_ROUTE",
    "ASK_ROUTE",
    "FEEDBACK_ROUTE",
    "HISTORY_ROUTE",
    "LANGUAGE_HEADER",
    "LOOPBACK_HOSTS",
    "TURN_HEADER",
    "ArticleLookup",
    "WebPlaygroundAdapter",
]
