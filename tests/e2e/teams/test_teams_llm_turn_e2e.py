"""A whole Teams turn through the real server and the real pipeline with Claude configured: the server's own
provider and SDK talk over HTTP to the fake Messages API on 127.0.0.1 (streamed deltas, a tool call), over the
sample regulations (deterministic test embedder). And the same turn when the API hangs: one quoted answer."""

# ruff: noqa: F811 (tests name the fixtures imported from tests/e2e/llm_turn.py)
from __future__ import annotations

import aiohttp
import pytest

from rag import messages
from tests.e2e.fakes.bot_connector import FakeBotConnector, is_final
from tests.e2e.llm_turn import QUESTION, llm_api, sample_components, script_tool_turn  # noqa: F401 (fixtures)
from tests.e2e.teams.activities import personal_message
from tests.fakes.llm_api import HANG


@pytest.fixture
async def ask(start_regbot, bot_connector: FakeBotConnector):
    server = await start_regbot(TEAMS_ALLOW_ANONYMOUS="true")
    async with aiohttp.ClientSession() as session:

        async def ask(text: str, activity_id: str):
            body = personal_message(text, service_url=bot_connector.url, activity_id=activity_id)
            async with session.post(server.url + "/api/messages", json=body) as response:
                assert response.status == 202
            return await bot_connector.wait_for(lambda a: is_final(a) and a.activity_id == activity_id, timeout_s=30)

        yield ask


def final_messages(connector: FakeBotConnector, activity_id: str) -> list:
    return [a for a in connector.messages() if a.activity_id == activity_id and not a.is_update
            and (a.stream_info or {}).get("streamType") in (None, "final")]


async def test_a_chat_message_is_answered_by_the_llm_streaming_after_a_tool_call_and_cites_both_articles(
        llm_api, ask, bot_connector):
    fake = script_tool_turn(llm_api)

    final = await ask(QUESTION, "msg-llm-1")

    assert "휴직 기간은 근속연수에 포함돼요" in final.text and "학업·연수 휴직은 빼요" in final.text
    assert any(n.startswith("취업규칙 제31조") for n in final.citation_names)
    assert any(n.startswith("취업규칙 제30조") for n in final.citation_names)
    assert messages.OFFLINE_NOTE not in final.text
    assert final.card_actions[0]["data"]["question"] == "휴직은 최대 얼마나 할 수 있어?"
    assert len(final_messages(bot_connector, "msg-llm-1")) == 1
    assert fake.calls("answer") == 2 and "회사가 인정하는 학업" in fake.sent("answer", 1)


async def test_when_the_llm_hangs_the_chat_gets_one_answer_quoting_the_article(llm_api, ask, bot_connector):
    fake = llm_api.script(understand=[HANG], grade=[HANG], answer=[HANG], verify=[HANG], followups=[HANG])

    final = await ask(QUESTION, "msg-llm-2")

    assert messages.OFFLINE_NOTE in final.text
    assert any(n.startswith("취업규칙 제31조") for n in final.citation_names)
    assert len(final_messages(bot_connector, "msg-llm-2")) == 1
    assert fake.calls() >= 1  # it did try the API
