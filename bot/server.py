"""The aiohttp server: Slack, Teams, health, readiness, metrics (DESIGN.md §3 HTTP routes)."""

from __future__ import annotations

import logging

from aiohttp import web

from bot.app import Components, build_components
from bot.config import Settings

log = logging.getLogger(__name__)

COMPONENTS = web.AppKey("components", Components)


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    components = request.app[COMPONENTS]
    checks = {"index": "ok" if components.corpus.chunks else "empty"}
    ready = all(v == "ok" for v in checks.values())
    return web.json_response({"ready": ready, "checks": checks}, status=200 if ready else 503)


def create_app(components: Components) -> web.Application:
    """The web application over already-built components."""
    app = web.Application(client_max_size=2 * 1024**2)
    app[COMPONENTS] = components
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    return app


def serve(settings: Settings) -> int:
    components = build_components(settings)
    web.run_app(create_app(components), host=settings.host, port=settings.port, print=None)
    return 0
