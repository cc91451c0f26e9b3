"""Anonymous Teams is for a local emulator only (issue 28): a web page cannot drive it, and it never posts to a
foreign serviceUrl. The autouse `loopback_only` fixture fails a test that resolves any remote host, so
"nothing posted to evil.example" is checked by the socket layer itself."""

from __future__ import annotations

import asyncio
import json
import time

from tests.e2e.fakes.bot_connector import FakeBotConnector, is_final
from tests.e2e.teams import test_teams_real_server_e2e as real_server
from tests.e2e.teams.activities import personal_message
from tests.e2e.teams.test_teams_real_server_e2e import RegbotTeams

regbot_teams = real_server.regbot_teams  # the anonymous-mode server and its fake connector

FOREIGN = "https://evil.example/"


class TestAnonymousModeIsLocalOnly:
    async def test_a_text_plain_post_is_refused(self, regbot_teams: RegbotTeams) -> None:
        body = json.dumps(personal_message("연차?", service_url=regbot_teams.connector.url, activity_id="t1"))

        status, _ = await regbot_teams.post(body, headers={"Content-Type": "text/plain"})

        assert status == 415
        assert regbot_teams.connector.received == []

    async def test_a_cross_site_origin_is_refused(self, regbot_teams: RegbotTeams) -> None:
        body = personal_message("연차?", service_url=regbot_teams.connector.url, activity_id="t2")

        status, _ = await regbot_teams.post(body, headers={"Origin": "https://evil.example"})

        assert status == 403
        assert regbot_teams.connector.received == []

    async def test_a_foreign_service_url_is_refused_and_nothing_is_posted(self, regbot_teams: RegbotTeams) -> None:
        body = personal_message("연차휴가는 며칠이야?", service_url=FOREIGN, activity_id="t3")

        status, _ = await regbot_teams.post(body)
        final = await regbot_teams.ask("연차휴가는 며칠이야?", "t4")  # the next turn is answered: t3 never ran

        assert status == 400
        assert [a.activity_id for a in regbot_teams.connector.received if is_final(a)] == ["t4"]
        assert "15일" in final.text


async def test_unclosed_mentions_are_answered_fast_and_health_stays_quick(
    regbot_teams: RegbotTeams, bot_connector: FakeBotConnector
) -> None:
    body = personal_message("<at>" * 8192, service_url=bot_connector.url, activity_id="at-1")  # 32 KB
    url = regbot_teams.server.url

    async def health() -> float:
        started = time.perf_counter()
        async with regbot_teams.session.get(url + "/healthz") as response:
            assert response.status == 200
        return time.perf_counter() - started

    started = time.perf_counter()
    (status, _), health_s = await asyncio.gather(regbot_teams.post(body), health())
    answered_s = time.perf_counter() - started

    assert status == 202
    assert answered_s < 1.0  # was 4.5 s for 64 KB with `<at>(.*?)</at>`
    assert health_s < 0.5
