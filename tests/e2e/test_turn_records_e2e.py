"""Turn records through the real server: Slack, Teams and playground turns and votes, then `regbot report` and
`/admin` over what was written (records.sqlite in the server's data dir, keep-questions off).
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import aiohttp
import pytest

from adapters.slack.blocks import FEEDBACK_BLOCK_ID
from bot.cli import main as regbot
from bot.report.records import SQLITE_FILE, SqliteRecordStore
from tests.e2e.conftest import RunningServer, StartServer
from tests.e2e.fakes.bot_connector import FakeBotConnector, is_final
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SIGNING_SECRET, SlackSender
from tests.e2e.slack.conftest import slack_api as slack_api
from tests.e2e.teams.activities import feedback_invoke, personal_message
from tests.e2e.teams.conftest import bot_connector as bot_connector
from tests.polling import wait_until

ADMIN_TOKEN = "admin-token-for-tests"
SLACK_QUESTION = "연차는 며칠이야?"
TEAMS_REFUSED = "회사 주차장 요금은 얼마예요?"
WEB_REFUSED = "회사 주차 요금은 얼마예요?"
WEB_QUESTIONS = ["안녕하세요", "출장 일비는 얼마야?", WEB_REFUSED]


async def ask_playground(http: aiohttp.ClientSession, url: str, question: str, tab: str) -> str:
    body = {"question": question, "conversation_id": tab, "user_id": "e2ebrowser012345"}
    async with http.post(url + "/api/playground/ask", json=body) as response:
        assert response.status == 200
        await response.text()
        return response.headers["X-Regbot-Turn"]


async def records_of(server: RunningServer, count: int) -> SqliteRecordStore:
    reader = SqliteRecordStore(Path(server.runtime.settings.data_dir) / SQLITE_FILE, create=False)

    async def written() -> bool:
        await server.runtime.recorder.flush()
        return len(await reader.turns(0)) >= count

    await wait_until(written, timeout_s=10)
    return reader


@pytest.fixture
async def server(start_regbot: StartServer, slack_api: FakeSlackApi, bot_connector: FakeBotConnector):
    return await start_regbot(
        SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack_api.api_url,
        TEAMS_ALLOW_ANONYMOUS="true", REGBOT_PLAYGROUND="true", REGBOT_ADMIN_TOKEN=ADMIN_TOKEN,
    )


async def play_turns(server: RunningServer, slack_api: FakeSlackApi, connector: FakeBotConnector,
                     http: aiohttp.ClientSession) -> dict[str, str]:
    """One Slack answer voted 👎, one Teams refusal voted 👎, three playground turns (one voted 👍)."""
    send = SlackSender(server.url, http, slack_api)
    mention = send.mention(f"<@{BOT_USER_ID}> {SLACK_QUESTION}")
    assert (await send.event(mention))[0] == 200
    final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, mention["ts"]))
    down = next(b for b in final.buttons(FEEDBACK_BLOCK_ID) if b["action_id"] == "feedback_down")
    assert (await send.click(down, message=final.as_slack()))[0] == 200

    activity = personal_message(TEAMS_REFUSED, service_url=connector.url, activity_id="msg-1")
    async with http.post(server.url + "/api/messages", json=activity) as response:
        assert response.status == 202
    reply = await connector.wait_for(lambda a: is_final(a) and a.activity_id == "msg-1", timeout_s=30)
    invoke = feedback_invoke("dislike", service_url=connector.url, activity_id="inv-1",
                             reply_to_id=reply.assigned_id)
    async with http.post(server.url + "/api/messages", json=invoke) as response:
        assert response.status == 200

    # One tab per question: a question's history would carry the previous topic into the next one.
    web_turns = {q: await ask_playground(http, server.url, q, f"e2etab{i:010d}") for i, q in enumerate(WEB_QUESTIONS)}
    vote = {"conversation_id": f"e2etab{1:010d}", "user_id": "e2ebrowser012345",
            "turn_id": web_turns["출장 일비는 얼마야?"], "rating": "up"}
    async with http.post(server.url + "/api/playground/feedback", json=vote) as response:
        assert response.status == 200
    return web_turns


class TestRecordsThroughTheRealServer:
    async def test_each_platform_turn_and_vote_is_recorded_without_its_text(
            self, server: RunningServer, slack_api: FakeSlackApi, bot_connector: FakeBotConnector):
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            web_turns = await play_turns(server, slack_api, bot_connector, http)

        reader = await records_of(server, 5)
        await wait_until(lambda: server.runtime.recorder.written >= 8)  # 5 turns and 3 votes
        turns = {t.platform + ":" + t.outcome: t for t in await reader.turns(0)}
        assert set(turns) == {"slack:answered", "teams:not_covered", "web:small_talk", "web:answered",
                              "web:not_covered"}
        assert ("취업규칙", "제20조") in {(c.doc, c.article) for c in turns["slack:answered"].citations}
        assert "주차장" in turns["teams:not_covered"].topic_nouns
        assert "주차" in turns["web:not_covered"].topic_nouns
        votes = {(v.platform, v.rating): v for v in await reader.feedback(0)}
        assert votes[("web", "up")].turn_id == web_turns["출장 일비는 얼마야?"]
        assert votes[("slack", "down")].turn_id == turns["slack:answered"].turn_id
        assert votes[("teams", "down")].turn_id == turns["teams:not_covered"].turn_id

        await server.runtime.recorder.close()
        stored = b"".join(p.read_bytes() for p in Path(server.runtime.settings.data_dir).glob(SQLITE_FILE + "*"))
        for text in (SLACK_QUESTION, TEAMS_REFUSED, WEB_REFUSED, *WEB_QUESTIONS, "15일"):
            assert text.encode() not in stored
        with sqlite3.connect(reader.path) as db:  # and not as SQLite would store it either (all JSON is UTF-8)
            dumped = "\n".join(db.iterdump())
        assert not any(q in dumped for q in (SLACK_QUESTION, TEAMS_REFUSED, WEB_REFUSED))


class TestReportAndAdminAgree:
    async def test_cli_json_and_admin_page_show_the_same_figures(
            self, server: RunningServer, slack_api: FakeSlackApi, bot_connector: FakeBotConnector,
            monkeypatch, capsys):
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            await play_turns(server, slack_api, bot_connector, http)
            await records_of(server, 5)
            await wait_until(lambda: server.runtime.recorder.written >= 8)
            monkeypatch.setenv("REGBOT_DATA_DIR", str(server.runtime.settings.data_dir))

            # While the server runs, from another "process" (same files, its own connection).
            assert await asyncio.to_thread(regbot, ["report", "--json", "--since", "1d"]) == 0
            report = json.loads(capsys.readouterr().out)

            async with http.get(server.url + "/admin",
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
                assert response.status == 200
                assert "default-src 'none'" in response.headers["Content-Security-Policy"]
                page = await response.text()

        assert report["turns"] == 5
        assert report["by_outcome"] == {"answered": 2, "hedged": 0, "not_covered": 2, "small_talk": 1,
                                        "rate_limited": 0, "error": 0}
        assert report["by_platform"] == {"web": 3, "slack": 1, "teams": 1}
        assert report["feedback"] == {"up": 1, "down": 2}
        assert report["refusal_themes"][0] == {"label": "요금", "count": 2, "nouns": ["요금"]}
        assert {"doc": "취업규칙", "article": "제20조", "count": 1} in report["top_articles"]
        assert report["latency_ms"]["p95"] >= report["latency_ms"]["p50"] > 0

        def metric(name: str) -> str:
            return re.search(rf'data-metric="{name}">([^<]*)<', page).group(1)

        assert metric("turns") == str(report["turns"])
        assert metric("feedback_down") == "2" and metric("feedback_up") == "1"
        assert metric("refusal_rate") == f"{report['by_outcome']['not_covered'] / 4 * 100:.1f}%"
        assert page.count("<svg") >= 4
        assert 'data-label="요금" data-value="2"' in page

    async def test_admin_needs_the_token(self, server: RunningServer):
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(server.url + "/admin") as missing:
                assert missing.status == 401
                assert missing.headers["WWW-Authenticate"].startswith("Bearer")
            async with http.get(server.url + "/admin", headers={"Authorization": "Bearer wrong"}) as wrong:
                assert wrong.status == 401
            async with http.get(server.url + "/admin", params={"since": "forever"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as bad:
                assert bad.status == 400
                assert "7d" in await bad.text()

    async def test_admin_answers_only_under_the_public_host_names(self, server: RunningServer):
        token = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(server.url + "/admin", headers={**token, "Host": "attacker.example"}) as rebound:
                assert rebound.status == 403
            async with http.get(server.url + "/admin",
                                headers={**token, "Origin": "http://attacker.example"}) as cross:
                assert cross.status == 403

    async def test_admin_is_absent_without_a_token(self, start_regbot: StartServer):
        plain = await start_regbot(REGBOT_PLAYGROUND="true")
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(plain.url + "/admin", headers={"Authorization": "Bearer "}) as response:
                assert response.status == 404
