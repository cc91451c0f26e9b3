"""The aiohttp server: Slack, Teams, health, readiness, metrics (DESIGN.md §3 HTTP routes)."""

from __future__ import annotations

import ipaddress
import logging
import sys

from aiohttp import web

from bot.app import Components, build_components
from bot.config import Settings
from bot.report.recorder import build_recorder
from bot.server.http_guard import RequestGuard
from bot.server.lifecycle import GracefulShutdown
from bot.server.readiness import check_readiness
from bot.server.runtime import Runtime
from bot.server.startup import announce, summarize
from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.scopes import ScopeResolver
from bot.service.service import BotService
from bot.state import RedisConnection, StateStores
from rag.models import Chunk, Scope

log = logging.getLogger(__name__)


RUNTIME = web.AppKey("runtime", Runtime)


def build_store(settings: Settings, metrics: Metrics) -> StateStores:
    """Redis when REDIS_URL is set (degrading to in-process on outages), in-process otherwise."""
    if not settings.redis_url:
        return StateStores.in_process()
    return StateStores.on_redis(RedisConnection.from_url(settings.redis_url), metrics=metrics)


def build_runtime(settings: Settings, components: Components, *, limits: LimitsConfig | None = None,
                  store: StateStores | None = None, metrics: Metrics | None = None) -> Runtime:
    metrics = metrics or Metrics()
    if components.llm is not None:
        metrics.watch_llm(components.llm)
    store = store or build_store(settings, metrics)
    recorder = build_recorder(settings, components)
    service = BotService(
        pipeline=components.pipeline, store=store, metrics=metrics,
        limits=limits or LimitsConfig.from_settings(settings), scopes=ScopeResolver.from_file(settings.scopes_file),
        log_content=settings.log_content, recorder=recorder,
    )
    return Runtime(settings=settings, components=components, store=store, metrics=metrics, service=service,
                   recorder=recorder)


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """200 while the bot can answer (even degraded); the body names each dependency's state (readiness.py)."""
    runtime = request.app[RUNTIME]
    report = await check_readiness(
        corpus=runtime.components.corpus, dense=runtime.components.dense, store=runtime.store,
        redis_configured=bool(runtime.settings.redis_url), llm=runtime.components.llm,
    )
    return web.json_response(report.model_dump(), status=200 if report.ready else 503)


async def metrics_view(request: web.Request) -> web.Response:
    metrics = request.app[RUNTIME].metrics
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.content_type})


async def routes_view(request: web.Request) -> web.Response:
    """`GET /` without the playground: what this server answers, so a browser pointed at it is not left at a 404."""
    routes = sorted({f"{route.method} {route.resource.canonical}" for route in request.app.router.routes()
                     if route.resource is not None and route.method != "HEAD"}, key=lambda r: r.split(" ")[1])
    return web.json_response({
        "service": "regbot",
        "routes": routes,
        "playground": "off: set REGBOT_PLAYGROUND=true, or run `regbot playground` on this machine",
    })


def indexed_articles(components: Components) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each indexed document with its titled articles (label, title) in document order: the organisation's rules
    before statutes, each by size, so the playground's examples start from what its users most likely ask about."""
    from rag.stages.legal_basis import CollectionRoles

    law = CollectionRoles(law=tuple(c.strip() for c in components.settings.law_collections.split(",") if c.strip()))
    articles: dict[str, dict[str, str]] = {}
    statutes: set[str] = set()
    for chunk in components.corpus.chunks:
        if chunk.kind != "article" or not chunk.title or chunk.deleted:
            continue
        articles.setdefault(chunk.doc, {}).setdefault(chunk.article, chunk.title)
        if law.is_law(chunk.collection):
            statutes.add(chunk.doc)
    order = sorted(articles, key=lambda doc: (doc in statutes, -len(articles[doc]), doc))
    return [(doc, list(articles[doc].items())) for doc in order]


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
                             allow_anonymous=settings.teams_allow_anonymous and not settings.microsoft_app_id,
                             openid_metadata_url=settings.teams_openid_metadata_url)
        teams.attach(app)
        runtime.adapters.append(teams)
    if settings.playground:
        from adapters.web import WebPlaygroundAdapter
        from adapters.web.page import example_questions
        from adapters.web.session import PlaygroundBudget, PlaygroundSessions

        lookup = runtime.components.lookup

        def article_chunks(reference: str, scope: Scope) -> tuple[Chunk, ...]:
            result = lookup.lookup(reference, scope)  # the playground's scope, as for its answers
            return result.chunks if result.kind in ("article", "annex", "addenda") else ()

        playground = WebPlaygroundAdapter(
            runtime.service, lookup_article=article_chunks, public_hosts=settings.public_host_names,
            examples=example_questions(indexed_articles(runtime.components)),
            sessions=PlaygroundSessions(settings.session_secret.encode() or None),
            access_code=settings.playground_access_code,
            budget=PlaygroundBudget(per_address_per_min=settings.playground_per_address_per_min,
                                    total_per_min=settings.playground_per_min))
        playground.attach(app)
        runtime.adapters.append(playground)


def create_app(runtime: Runtime) -> web.Application:
    """The web application over a built runtime."""
    limit = runtime.settings.max_body_bytes
    app = web.Application(client_max_size=limit)  # a chunked body is cut off here; RequestGuard checks the length
    RequestGuard(max_body_bytes=limit).install(app)
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_view)
    attach_adapters(app, runtime)
    if runtime.settings.admin_token:
        from bot.report.admin import AdminPage

        AdminPage.for_runtime(runtime).attach(app)
    if not runtime.settings.playground:
        app.router.add_get("/", routes_view)

    async def close(_: web.Application) -> None:
        # Adapters finish their in-flight answers (bounded) before state is closed.
        for adapter in runtime.adapters:
            try:
                await adapter.close()
            except Exception:
                log.exception("closing %s failed", type(adapter).__name__)
        await runtime.store.close()
        if runtime.recorder is not None:
            await runtime.recorder.close()
        await runtime.components.aclose()

    app.on_shutdown.append(close)
    GracefulShutdown.for_runtime(runtime).install(app)
    return app


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def exposure_problem(settings: Settings) -> str | None:
    """Why these settings must not be served, or None: anonymous Teams reachable from other machines.

    Anonymous Teams accepts unauthenticated activities and posts replies to whatever `serviceUrl` they name.
    """
    if settings.teams_allow_anonymous and not settings.microsoft_app_id and not _is_loopback(settings.host):
        return (
            f"TEAMS_ALLOW_ANONYMOUS=true (no MICROSOFT_APP_ID) is for local testing, but REGBOT_HOST={settings.host!r} "
            "is not a loopback address. Bind to 127.0.0.1 (REGBOT_HOST), or register the bot and set "
            "MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD and MICROSOFT_APP_TENANT_ID."
        )
    return None


def port_in_use(host: str, port: int) -> bool:
    """Whether another process listens on host:port (checked before the index is loaded, which takes seconds)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds: TIME_WAIT is no conflict
        try:
            probe.bind((host.strip("[]") or "0.0.0.0", port))
        except OSError as exc:  # any other problem (a name that does not resolve) is run_app's to report
            return exc.errno == errno.EADDRINUSE
    return False


PORT_IN_USE = "port {port} is in use: pass --port"


def run_until_stopped(app: web.Application, settings: Settings, *, ready=None) -> None:
    """`web.run_app` until Ctrl-C or SIGTERM, then one calm line on stderr; a port taken meanwhile is OSError."""
    import errno

    try:
        web.run_app(app, host=settings.host, port=settings.port, print=ready, shutdown_timeout=30)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(PORT_IN_USE.format(port=settings.port)) from None
        raise
    print("regbot: stopped", file=sys.stderr)


class PortInUse(Exception):
    """The port is taken; the message says how to choose another."""


def serve(settings: Settings) -> int:
    """Run the server until stopped; 2 (with one line on stderr) when the settings would expose it."""
    problem = exposure_problem(settings)
    if problem:
        print(f"regbot serve: {problem}", file=sys.stderr)
        return 2
    if port_in_use(settings.host, settings.port):
        raise PortInUse(PORT_IN_USE.format(port=settings.port))
    metrics = Metrics()
    store = build_store(settings, metrics)
    # The answer cache lives in the state store, so replicas share it through Redis.
    components = build_components(settings, cache_backend=store.cache)
    components.warm_up()
    runtime = build_runtime(settings, components, store=store, metrics=metrics)
    app = create_app(runtime)
    announce(summarize(settings, components))
    run_until_stopped(app, settings)
    return 0
