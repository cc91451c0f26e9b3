"""DNS rebinding: the playground answers only under the host names it is published as (REGBOT_PUBLIC_HOSTS).

An attacker's page whose name resolves to 127.0.0.1 sends `Host` and `Origin` of its own name; both are
checked against the allow-list (loopback names by default), on every playground route.
"""

from __future__ import annotations

import aiohttp
import pytest

from tests.e2e.conftest import StartServer

ASK = {"question": "연차는 며칠이야?", "conversation_id": "tab0123456789", "user_id": "browser0123456"}


async def ask(url: str, **headers: str) -> int:
    async with aiohttp.ClientSession() as http, http.post(url + "/api/playground/ask", json=ASK,
                                                          headers=headers) as response:
        await response.read()
        return response.status


async def page(url: str, **headers: str) -> int:
    async with aiohttp.ClientSession() as http, http.get(url + "/", headers=headers) as response:
        return response.status


class TestPlaygroundHosts:
    async def test_attacker_host_and_origin_are_refused(self, start_regbot: StartServer) -> None:
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        rebound = {"Host": "evil.example:3978", "Origin": "http://evil.example:3978"}

        assert await ask(server.url, **rebound) == 403
        assert await page(server.url, Host="evil.example:3978") == 403
        assert await ask(server.url) == 200

    @pytest.mark.parametrize("host", ["localhost:3978", "127.0.0.1", "[::1]:3978", "LOCALHOST"])
    async def test_loopback_names_are_allowed_by_default(self, start_regbot: StartServer, host: str) -> None:
        server = await start_regbot(REGBOT_PLAYGROUND="true")

        assert await page(server.url, Host=host) == 200

    async def test_published_name_is_allowed_and_others_are_not(self, start_regbot: StartServer) -> None:
        server = await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_PUBLIC_HOSTS="rules.example.com, regbot.internal")

        assert await ask(server.url, Host="rules.example.com", Origin="https://rules.example.com") == 200
        assert await ask(server.url, Host="regbot.internal:8080") == 200
        assert await ask(server.url, Host="rules.example.com", Origin="https://evil.example") == 403
        assert await ask(server.url, Host="127.0.0.1") == 403  # loopback only while no name is published
        assert await ask(server.url, Host="rules.example.com", Origin="null") == 403
