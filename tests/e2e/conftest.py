"""The real regbot server (bot.server) over the bundled samples, started on a free port for e2e tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from aiohttp import web

from bot.limits import LimitsConfig
from bot.server import Runtime, build_runtime, create_app
from testkit import make_settings, serve_app

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
