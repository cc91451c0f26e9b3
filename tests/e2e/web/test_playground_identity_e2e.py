"""A client that invents a fresh user id (and drops the cookie) for each question is still limited (issue 28)."""

from __future__ import annotations

import aiohttp

from rag import messages

QUESTION = "경조휴가는 며칠이야?"


async def test_fresh_client_ids_are_still_limited(start_regbot) -> None:
    server = await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_PLAYGROUND_PER_ADDRESS_PER_MIN="5")
    limited = 0
    async with aiohttp.ClientSession() as http:  # keeps no cookie of 127.0.0.1: a new session every time
        for n in range(8):
            body = {"question": QUESTION, "conversation_id": f"tab{n:013d}", "user_id": f"fresh{n:011d}"}
            async with http.post(server.url + "/api/playground/ask", json=body) as response:
                assert response.status == 200
                text = await response.text()
            limited += messages.RATE_LIMITED.split("{")[0] in text

    assert limited == 3
