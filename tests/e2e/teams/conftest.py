"""Teams e2e fixtures: our aiohttp app with the Teams adapter, a fake Bot Connector, a fake TurnService."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from adapters.teams import TeamsAdapter
from tests.e2e.adapter_server import base_url, serve_adapter
from tests.e2e.fakes.bot_connector import FakeBotConnector
from tests.e2e.teams.sample_answers import leave_answer_events
from tests.fakes.turn_service import FakeTurnService


@dataclass
class TeamsServer:
    """Our server under test and a client that posts activities to it."""

    url: str
    adapter: TeamsAdapter
    session: aiohttp.ClientSession

    async def post(self, body: Any, *, headers: dict[str, str] | None = None) -> tuple[int, str]:
        data = body if isinstance(body, str | bytes) else None
        async with self.session.post(
            self.url + "/api/messages",
            json=None if data is not None else body,
            data=data,
            headers=headers or {},
        ) as response:
            return response.status, await response.text()

    async def get(self, path: str) -> int:
        async with self.session.get(self.url + path) as response:
            return response.status


@asynccontextmanager
async def running_teams_server(service: FakeTurnService, **adapter_kwargs: Any) -> AsyncIterator[TeamsServer]:
    """Our app with a Teams adapter (anonymous unless `adapter_kwargs` say otherwise) in front of `service`.

    On exit the adapter is closed first: that waits for answers still running in the background.
    """
    settings: dict[str, Any] = {"app_id": "", "app_password": "", "tenant_id": "", "allow_anonymous": True}
    settings.update(adapter_kwargs)
    adapter = TeamsAdapter(service, **settings)
    server = await serve_adapter(adapter)
    try:
        async with aiohttp.ClientSession() as session:
            yield TeamsServer(url=base_url(server), adapter=adapter, session=session)
    finally:
        await adapter.close()
        await server.close()


@pytest.fixture
async def bot_connector() -> AsyncIterator[FakeBotConnector]:
    async with FakeBotConnector() as connector:
        yield connector


@pytest.fixture
def teams_service() -> FakeTurnService:
    return FakeTurnService(leave_answer_events)


@pytest.fixture
async def teams_server(teams_service: FakeTurnService) -> AsyncIterator[TeamsServer]:
    async with running_teams_server(teams_service) as server:
        yield server
