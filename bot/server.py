"""The aiohttp server: Slack, Teams, health, readiness, metrics (DESIGN.md §3 HTTP routes)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from aiohttp import web

from bot.app import Components, build_components
from bot.config import Settings
from bot.lifecycle import GracefulShutdown
from bot.limits import LimitsConfig
from bot.metrics import Metrics
from bot.scopes import ScopeResolver
from bot.service import BotService
from bot.state import FailoverStateStore, MemoryStateStore, RedisStateStore, StateStore
from rag.models import Chunk, Scope

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What the server holds for its lifetime: components, the service, state, metrics and adapters."""

    settings: Settings
    components: Components
    store: StateStore
    metrics: Metrics
    service: BotService
    adapters: list = field(default_factory=list)


RUNTIME = web.AppKey("runtime", Runtime)


def build_store(settings: Settings, metrics: Metrics) -> StateStore:
    """Redis when REDIS_URL is set (degrading to in-process on outages), in-process otherwise."""
    if not settings.redis_url:
        return MemoryStateStore()
    return FailoverStateStore(RedisStateStore.from_url(settings.redis_url), MemoryStateStore(), metrics=metrics)


def build_runtime(settings: Settings, components: Components, *, limits: LimitsConfig | None = None,
                  store: StateStore | None = None, metrics: Metrics | None = None) -> Runtime:
    metrics = metrics or Metrics()
    if components.llm is not None:
        metrics.watch_llm(components.llm)
    store = store or build_store(settings, metrics)
    service = BotService(
        pipeline=components.pipeline, store=store, metrics=metrics,
        limits=limits or LimitsConfig.from_settings(settings), scopes=ScopeResolver.from_file(settings.scopes_file),
        log_content=settings.log_content,
    )
    return Runtime(settings=settings, components=components, store=store, metrics=metrics, service=service)


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """200 when the index is loaded and the state store answers; the body names each dependency's state."""
    runtime = request.app[RUNTIME]
    corpus = runtime.components.corpus
    checks: dict[str, str] = {}
    try:
        await asyncio.to_thread(corpus.refresh)
        checks["index"] = "ok" if corpus.chunks else "empty"
    except Exception as exc:  # the store file is unreadable
        checks["index"] = f"error: {exc.__class__.__name__}"
    dense = runtime.components.dense
    if dense is None:
        checks["chroma"] = "disabled"
    else:
        try:
            await asyncio.to_thread(dense.count)
            checks["chroma"] = "ok"
        except Exception as exc:
            checks["chroma"] = f"unreachable: {exc.__class__.__name__}"
    try:
        reachable = await runtime.store.ping()
        degraded = bool(getattr(runtime.store, "degraded", False))
        checks["state"] = "degraded (in-process fallback)" if degraded else ("ok" if reachable else "unreachable")
    except Exception as exc:
        checks["state"] = f"unreachable: {exc.__class__.__name__}"
    # Chroma down or Redis degraded still answers (lexical retrieval, in-process state): ready, reported.
    ready = checks["index"] == "ok" and not checks["state"].startswith("unreachable")
    return web.json_response({"ready": ready, "checks": checks}, status=200 if ready else 503)


async def metrics_view(request: web.Request) -> web.Response:
    metrics = request.app[RUNTIME].metrics
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.content_type})


def attach_adapters(app: web.Application, runtime: Runtime) -> None:
    """Mount Slack and Teams when they are configured, and the web playground when REGBOT_PLAYGROUND=true."""
    settings = runtime.settings
    if settings.slack_bot_token and (settings.slack_signing_secret or settings.slack_app_token):
        from adapters.slack.app import SlackAdapter

        slack = SlackAdapter(runtime.service, bot_token=settings.slack_bot_token,
                             signing_secret=settings.slack_signing_secret, api_url=settings.slack_api_url,
                             stream_mode=settings.slack_stream_mode, app_token=settings.slack_app_token,
                             max_question_chars=settings.max_question_chars)
        slack.attach(app)
        runtime.adapters.append(slack)
        if settings.slack_app_token:
            async def start_socket_mode(_: web.Application) -> None:
                await slack.start_socket_mode()

            app.on_startup.append(start_socket_mode)
    if settings.microsoft_app_id or settings.teams_allow_anonymous:
        from adapters.teams.app import TeamsAdapter

        teams = TeamsAdapter(runtime.service, app_id=settings.microsoft_app_id,
                             app_password=settings.microsoft_app_password,
                             tenant_id=settings.microsoft_app_tenant_id,
                             allow_anonymous=settings.teams_allow_anonymous and not settings.microsoft_app_id)
        teams.attach(app)
        runtime.adapters.append(teams)
    if settings.playground:
        from adapters.web import WebPlaygroundAdapter

        lookup = runtime.components.lookup

        def article_chunks(reference: str, scope: Scope) -> tuple[Chunk, ...]:
            result = lookup.lookup(reference, scope)  # the playground's scope, as for its answers
            return result.chunks if result.kind in ("article", "annex", "addenda") else ()

        playground = WebPlaygroundAdapter(runtime.service, lookup_article=article_chunks)
        playground.attach(app)
        runtime.adapters.append(playground)


def create_app(runtime: Runtime) -> web.Application:
    """The web application over a built runtime."""
    app = web.Application(client_max_size=2 * 1024**2)
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_view)
    attach_adapters(app, runtime)

    async def close(_: web.Application) -> None:
        # Adapters finish their in-flight answers (bounded) before state is closed.
        for adapter in runtime.adapters:
            try:
                await adapter.close()
            except Exception:
                log.exception("closing %s failed", type(adapter).__name__)
        await runtime.store.close()
        await runtime.components.aclose()

    app.on_shutdown.append(close)
    GracefulShutdown.for_runtime(runtime).install(app)
    return app


def serve(settings: Settings) -> int:
    metrics = Metrics()
    store = build_store(settings, metrics)
    # The answer cache lives in the state store, so replicas share it through Redis.
    components = build_components(settings, cache_backend=store)
    runtime = build_runtime(settings, components, store=store, metrics=metrics)
    web.run_app(create_app(runtime), host=settings.host, port=settings.port, print=None, shutdown_timeout=30)
    return 0
