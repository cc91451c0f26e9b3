"""Document text with markup in it reaches Slack, Teams and the playground under the same rules (issue 14).

A regulation (or the model quoting it) can carry HTML, a `javascript:` link, Slack's broadcast tokens or a bare
`@channel`. Each adapter runs the same answer, streamed in small pieces, over real HTTP; what the fake Slack Web
API, the fake Bot Connector and the playground's event stream received must be inert: no tag, no script link,
nothing that pings. Slack and Teams render markup, so `& < >` arrive escaped; the playground sets text with
`textContent`, so it gets the text unescaped, with the same tokens, links and broadcasts neutralised.
"""

from __future__ import annotations

import json
import re

import aiohttp
import pytest

from adapters.slack import SlackAdapter
from adapters.teams import TeamsAdapter
from adapters.web import WebPlaygroundAdapter
from rag.models import Answer, AnswerEvent, Citation, Route, Turn
from tests.e2e.adapter_server import base_url, serve_adapter
from tests.e2e.fakes.bot_connector import FakeBotConnector, is_final
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SIGNING_SECRET, SlackSender
from tests.e2e.teams.activities import personal_message
from tests.fakes.turn_service import FakeTurnService
from tests.unit.adapters.web.fakes import parse_sse

HOSTILE = {
    "img-onerror": '<img src=x onerror="alert(1)">',
    "html-js-link": '<a href="javascript:alert(1)">규정 원문</a>',
    "markdown-js-link": "[규정 원문](javascript:alert(1))",
    "markdown-data-link": "[첨부](data:text/html;base64,PHNjcmlwdD4=)",
    "slack-channel": "<!channel> 전원 확인",
    "slack-here": "<!here|here>",
    "bare-channel": "@channel 공지",
    "bare-everyone": "@everyone",
    "subteam": "<!subteam^S0HR|@인사팀>",
    "user-mention": "<@U0BOSS> 님 확인",
    "disguised-link": "<https://evil.example/login|취업규칙 원문>",
    "teams-mention": "<at>홍길동</at>",
}

CITATION = Citation(index=1, doc="취업규칙", article="제20조", title="연차휴가", quote="15일의 유급휴가를 준다.")


def hostile_answer(hostile: str):
    text = f"연차는 15일이에요[1]. 문서에는 이렇게 적혀 있어요: {hostile} 끝."

    def script(turn: Turn) -> list[AnswerEvent]:
        pieces = [text[i:i + 3] for i in range(0, len(text), 3)]  # splits every token mid-way somewhere
        return [
            *(AnswerEvent.delta(piece) for piece in pieces),
            AnswerEvent.sources((CITATION,)),
            AnswerEvent.done(Answer(text=text, route=Route.SEARCH, citations=(CITATION,))),
        ]

    return script


_BARE_BROADCAST = re.compile(r"@(here|channel|everyone)", re.IGNORECASE)  # a word joiner after @ breaks it
_SCRIPT_LINK = re.compile(r"\]\(\s*(javascript|data|vbscript):", re.IGNORECASE)
_SLACK_TOKEN = re.compile(r"<[!@#]|<[a-z][a-z0-9+.-]*:[^>]*\|", re.IGNORECASE)


def assert_inert_markup(sent: str) -> None:
    """For surfaces that render markup (Slack mrkdwn/markdown, Teams markdown)."""
    assert "<" not in sent and ">" not in sent, sent
    assert not _SCRIPT_LINK.search(sent), sent
    assert not _BARE_BROADCAST.search(sent), sent


def assert_inert_text(sent: str) -> None:
    """For the playground, which shows text with textContent: tags are only text there, tokens and links not."""
    assert not _SLACK_TOKEN.search(sent), sent
    assert not _SCRIPT_LINK.search(sent), sent
    assert not _BARE_BROADCAST.search(sent), sent


def _texts(value: object) -> list[str]:
    """Every `text`/`markdown_text` string inside a Web API call's arguments (messages, blocks, stream chunks)."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("text", "markdown_text") and isinstance(v, str)]
        return found + [t for v in value.values() if not isinstance(v, str) for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, str) and value.startswith(("[", "{")):
        try:
            return _texts(json.loads(value))
        except ValueError:
            return []
    return []


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
async def test_slack_posts_document_markup_inert(hostile: str) -> None:
    async with FakeSlackApi() as slack, aiohttp.ClientSession() as session:
        adapter = SlackAdapter(FakeTurnService(hostile_answer(hostile)), bot_token=BOT_TOKEN,
                               signing_secret=SIGNING_SECRET, api_url=slack.api_url)
        server = await serve_adapter(adapter)
        try:
            send = SlackSender(base_url(server), session, slack)
            event = send.mention(f"<@{BOT_USER_ID}> 연차는 며칠이야?")
            assert (await send.event(event))[0] == 200
            final = await slack.wait_for(lambda: slack.answered(CHANNEL, event["ts"]))
        finally:
            await adapter.close()
            await server.close()

    assert "15일" in final.answer_text
    texts = [text for call in slack.calls if call.method.startswith(("chat.", "assistant."))
             for text in _texts(call.args)]
    assert any("15일" in text for text in texts)
    for text in texts:
        assert_inert_markup(text)


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
async def test_teams_posts_document_markup_inert(hostile: str) -> None:
    async with FakeBotConnector() as connector, aiohttp.ClientSession() as session:
        adapter = TeamsAdapter(FakeTurnService(hostile_answer(hostile)), app_id="", app_password="", tenant_id="",
                               allow_anonymous=True)
        server = await serve_adapter(adapter)
        try:
            activity = personal_message("연차는 며칠이야?", service_url=connector.url, activity_id="m1")
            async with session.post(base_url(server) + "/api/messages", json=activity) as response:
                assert response.status == 202
            final = await connector.wait_for(lambda a: is_final(a) and a.activity_id == "m1", timeout_s=10)
        finally:
            await adapter.close()
            await server.close()

    assert "15일" in final.text
    for received in connector.received:
        assert_inert_markup(received.text)


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
async def test_playground_streams_document_markup_inert(hostile: str) -> None:
    adapter = WebPlaygroundAdapter(FakeTurnService(hostile_answer(hostile)))
    server = await serve_adapter(adapter)
    try:
        body = {"question": "연차는 며칠이야?", "conversation_id": "tab0123456789", "user_id": "browser0123456"}
        async with aiohttp.ClientSession() as session, session.post(
            base_url(server) + "/api/playground/ask", json=body
        ) as response:
            frames = parse_sse(await response.text())
    finally:
        await server.close()

    streamed = "".join(data["text"] for kind, data in frames if kind == "delta")
    final = next(data["answer"]["text"] for kind, data in frames if kind == "done")
    assert "15일" in final
    assert streamed == final  # the stream adds up to what the final answer shows
    assert_inert_text(final)
