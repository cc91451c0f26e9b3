"""Our aiohttp app with one adapter attached, on a free port of 127.0.0.1, for the adapters' e2e tests."""

from __future__ import annotations

from typing import Protocol

from aiohttp import web
from aiohttp.test_utils import TestServer


class AttachableAdapter(Protocol):
    def attach(self, app: web.Application) -> None: ...


async def serve_adapter(adapter: AttachableAdapter) -> TestServer:
    """Start an app with `adapter`'s routes and a `GET /healthz`, as `bot.server.server` would; the caller closes it."""
    app = web.Application()
    adapter.attach(app)

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app.router.add_get("/healthz", healthz)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


def base_url(server: TestServer) -> str:
    return str(server.make_url("")).rstrip("/")
