"""E2E fixtures: nothing leaves 127.0.0.1, and the real regbot server (bot.server.server) over the bundled samples."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web

from bot.server.runtime import Runtime
from bot.server.server import build_runtime, create_app
from bot.service.limits import LimitsConfig
from testkit import make_settings, serve_app

_LOOPBACK = {"127.0.0.1", "localhost", "::1", b"127.0.0.1", b"localhost", b"::1", None}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Fails the test if anything (Teams token acquisition, a JWKS download, a Slack URL) resolves a remote host."""
    real_getaddrinfo = socket.getaddrinfo
    attempts: list[object] = []

    def guarded(host: object, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK:
            attempts.append(host)
            raise OSError(f"tests must not leave 127.0.0.1 (tried {host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)
    yield attempts
    assert not attempts, f"tests tried to reach {attempts}"


# Generous limits: e2e tests check behaviour, not throttling (tests/unit/bot covers the limits).
E2E_LIMITS = LimitsConfig(user_burst=1000, workspace_burst=1000, max_active_answers=16, max_waiting_answers=64)


@dataclass
class RunningServer:
    """Our server on 127.0.0.1: its base URL and the runtime (service, store, metrics) behind it."""

    url: str
    runtime: Runtime
    runner: web.AppRunner


StartServer = Callable[..., Awaitable[RunningServer]]


@pytest.fixture
async def start_regbot(sample_components, tmp_path) -> AsyncIterator[StartServer]:
    """Factory: `await start_regbot(SLACK_API_URL=..., SLACK_BOT_TOKEN=...)` starts the real server.

    Keyword arguments are environment-variable names of `Settings`; the sample index is shared.
    """
    running: list[RunningServer] = []

    async def start(limits: LimitsConfig | None = None, **overrides: str) -> RunningServer:
        settings = make_settings(tmp_path / f"server{len(running)}", **overrides)
        runtime = build_runtime(settings, sample_components, limits=limits or E2E_LIMITS)
        url, runner = await serve_app(create_app(runtime))
        server = RunningServer(url=url, runtime=runtime, runner=runner)
        running.append(server)
        return server

    yield start
    for server in running:
        await server.runner.cleanup()
