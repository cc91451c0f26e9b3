"""Malformed input from a stranger (issue 28): a 4xx and one log line, never a 500 or a traceback.

Over HTTP into the real server, with logging configured as `regbot serve` configures it.
"""

from __future__ import annotations

import aiohttp
import pytest

from tests.e2e import test_hostile_requests_e2e as hostile
from tests.e2e.conftest import StartServer
from tests.e2e.test_hostile_requests_e2e import SLACK, ServerLog, post

# The hostile-requests fixtures: the server's JSON log and an HTTP client.
server_log = hostile.server_log
http = hostile.http

ADMIN_TOKEN = "admin-token-for-malformed-input"
DEEP_JSON = b"[" * 5000


class TestSlackTimestamp:
    @pytest.mark.parametrize("digits", [12, 309, 4301], ids=["12", "309", "4301"])
    async def test_oversized_timestamp_is_401_without_a_traceback(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, digits: int
    ) -> None:
        server = await start_regbot(**SLACK)
        headers = {"X-Slack-Request-Timestamp": "9" * digits, "X-Slack-Signature": "v0=" + "0" * 64,
                   "Content-Type": "application/json"}

        status, _ = await post(http, server.url + "/slack/events", b"{}", **headers)

        assert status == 401
        assert server_log.errors() == []


class TestDeepJson:
    async def test_deep_json_to_the_playground_is_400(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server = await start_regbot(REGBOT_PLAYGROUND="true")

        status, text = await post(http, server.url + "/api/playground/ask", DEEP_JSON,
                                  **{"Content-Type": "application/json"})

        assert status == 400, text
        assert server_log.errors() == []

    async def test_deep_json_to_anonymous_teams_is_400(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server = await start_regbot(TEAMS_ALLOW_ANONYMOUS="true")

        status, text = await post(http, server.url + "/api/messages", DEEP_JSON,
                                  **{"Content-Type": "application/json"})

        assert status == 400, text
        assert server_log.errors() == []


class TestAdminWindow:
    @pytest.mark.parametrize("since", ["99999999999w", "99999999w", "1" * 400 + "d", "nan d"])
    async def test_out_of_range_since_is_400_not_an_outage(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, since: str
    ) -> None:
        server = await start_regbot(REGBOT_ADMIN_TOKEN=ADMIN_TOKEN)

        async with http.get(server.url + "/admin", params={"since": since},
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            status, text = response.status, await response.text()

        assert status == 400, text
        assert "cannot be read" not in text
        assert server_log.errors() == []
