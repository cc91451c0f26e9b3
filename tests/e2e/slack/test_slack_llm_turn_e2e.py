"""A whole Slack turn through the real server and the real pipeline with Claude configured: the server's own
provider and SDK talk over HTTP to the fake Messages API on 127.0.0.1 (streamed deltas, a tool call), over the
sample regulations (deterministic test embedder). And the same turn when the API fails: one quoted answer."""

# ruff: noqa: F811 (tests name the fixtures imported from tests/e2e/llm_turn.py)
from __future__ import annotations

import aiohttp
import pytest

from rag import messages
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.llm_turn import QUESTION, llm_api, sample_components, script_tool_turn  # noqa: F401 (fixtures)
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SIGNING_SECRET, SlackSender


@pytest.fixture
async def send(start_regbot, slack_api: FakeSlackApi):
    server = await start_regbot(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
                                SLACK_API_URL=slack_api.api_url)
    async with aiohttp.ClientSession() as session:
        yield SlackSender(server.url, session, slack_api)


async def test_a_mention_is_answered_by_the_llm_streaming_after_a_tool_call_and_cites_both_articles(
        llm_api, send, slack_api):
    fake = script_tool_turn(llm_api)
    event = send.mention(f"<@{BOT_USER_ID}> {QUESTION}")

    assert (await send.event(event))[0] == 200
    final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]), timeout_s=30)

    assert "휴직 기간은 근속연수에 포함돼요" in final.answer_text
    assert "학업·연수 휴직은 빼요" in final.answer_text
    assert "취업규칙 제31조" in final.context_text and "취업규칙 제30조" in final.context_text
    assert messages.OFFLINE_NOTE not in final.answer_text
    assert len(slack_api.bot_replies(CHANNEL, event["ts"])) == 1
    assert fake.calls("answer") == 2  # the tool round, then the streamed answer
    assert "회사가 인정하는 학업" in fake.sent("answer", 1)  # the looked-up article went back to the model
    assert fake.bodies["answer"][0]["model"] == "claude-strong" and fake.bodies["answer"][0]["stream"]


async def test_when_the_llm_fails_the_mention_gets_one_answer_quoting_the_article(llm_api, send, slack_api):
    fake = llm_api.script()  # every call answers 500
    event = send.mention(f"<@{BOT_USER_ID}> {QUESTION}")

    assert (await send.event(event))[0] == 200
    final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]), timeout_s=30)

    assert messages.OFFLINE_NOTE in final.answer_text
    assert "취업규칙 제31조" in final.context_text
    assert len(slack_api.bot_replies(CHANNEL, event["ts"])) == 1
    assert fake.calls() >= 1  # it did try the API
