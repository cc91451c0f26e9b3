"""A published playground with a shared access code (REGBOT_PLAYGROUND_ACCESS_CODE), on the real server over
HTTP: the API answers 401 until the session has entered the code once; the session's cookies remember it."""

from __future__ import annotations

import aiohttp

from adapters.web.page import STATIC_PREFIX
from adapters.web.session import ACCESS_COOKIE
from tests.e2e.conftest import RunningServer, StartServer

CODE = "hr-pilot-2026"
ASK = {"question": "입사 1년 지나면 연차 며칠 받아?", "conversation_id": "e2etab0123456789", "user_id": "ignored0"}


def browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def status_of_ask(http: aiohttp.ClientSession, server: RunningServer) -> int:
    async with http.post(server.url + "/api/playground/ask", json=ASK) as response:
        await response.read()
        return response.status


async def unlock(http: aiohttp.ClientSession, server: RunningServer, code: str) -> int:
    async with http.post(server.url + "/api/playground/unlock", json={"code": code}) as response:
        await response.read()
        return response.status


async def start(start_regbot: StartServer) -> RunningServer:
    return await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_PLAYGROUND_ACCESS_CODE=CODE)


class TestAccessCode:
    async def test_the_api_refuses_until_the_code_is_entered_once(self, start_regbot: StartServer) -> None:
        server = await start(start_regbot)
        async with browser() as http:
            async with http.get(server.url + "/") as page:  # the page itself loads: it asks for the code
                assert page.status == 200
            assert await status_of_ask(http, server) == 401
            history = server.url + "/api/playground/history?conversation_id=e2etab0123456789"
            async with http.get(history) as response:
                assert response.status == 401 and (await response.json())["access"] == "required"

            assert await unlock(http, server, "wrong-code") == 401
            assert await unlock(http, server, CODE) == 200
            async with http.post(server.url + "/api/playground/ask", json=ASK) as response:
                assert response.status == 200
                assert "15일" in await response.text()
            assert await status_of_ask(http, server) == 200  # remembered, not asked again

    async def test_the_remembered_code_is_bound_to_its_session(self, start_regbot: StartServer) -> None:
        server = await start(start_regbot)
        async with browser() as first:
            assert await unlock(first, server, CODE) == 200
            access = next(c.value for c in first.cookie_jar if c.key == ACCESS_COOKIE)
        async with browser() as other:
            # Another browser with the first one's access cookie but a session of its own: still locked.
            other.cookie_jar.update_cookies({ACCESS_COOKIE: access})
            assert await status_of_ask(other, server) == 401
        async with browser() as fresh:
            assert await status_of_ask(fresh, server) == 401

    async def test_without_a_code_the_playground_is_open(self, start_regbot: StartServer) -> None:
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            assert await status_of_ask(http, server) == 200

    async def test_the_page_script_asks_for_the_code_and_retries(self, start_regbot: StartServer) -> None:
        server = await start(start_regbot)
        async with browser() as http:
            async with http.get(server.url + "/") as page:
                html = await page.text()
            async with http.get(f"{server.url}{STATIC_PREFIX}/playground.js") as script:
                assert script.status == 200
                js = await script.text()
        assert "/api/playground/unlock" in html  # the endpoint the script is given
        assert "API.unlock" in js and "L.ACCESS_PROMPT" in js
