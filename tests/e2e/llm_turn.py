"""What the Slack and Teams whole-turn e2e tests with Claude configured share: the fake Messages API served on
127.0.0.1, the session's sample index rewired to it, and one scripted turn (a tool call for the referenced
article, then a streamed answer citing both)."""

from __future__ import annotations

import re

import pytest

from bot.app import build_components
from testkit import HashingEmbedder, make_settings
from tests.fakes.llm_api import FakeLlmApi, Reply, as_json, streamed, tool_calls
from tests.fakes.llm_pipeline import FakeLlmServer, llm_settings

QUESTION = "휴직 기간도 근속연수에 들어가?"


@pytest.fixture
async def llm_api():
    async with FakeLlmServer() as server:
        yield server


@pytest.fixture
def sample_components(sample_components, llm_api, kiwi_tokenizer):
    """The session's sample index, wired by `build_components` with Claude pointed at the fake API; a hang is
    given up on after REGBOT_LLM_HANG_S (a quarter of it for the short structured calls)."""
    settings = make_settings(sample_components.settings.data_dir, **llm_settings(llm_api, REGBOT_LLM_HANG_S="2"))
    return build_components(settings, embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer)


def numbered(label: str, text: str) -> int:
    found = re.findall(rf"\[(\d+)\] {re.escape(label)}[ (]", text.replace("\\n", "\n"))
    assert found, f"{label} is not among the sources sent"
    return int(found[-1])


def graded(text: str, body: dict) -> Reply:
    return as_json({"score": 90, "missing": [], "relevant": [numbered("취업규칙 제31조", text)]})


def answer_citing_both(text: str, body: dict) -> Reply:
    own, referenced = numbered("취업규칙 제31조", text), numbered("취업규칙 제30조", text)
    return streamed("휴직 기간은 ", f"근속연수에 포함돼요 [{own}]. ",
                    f"다만 회사가 인정하는 학업·연수 휴직은 빼요 [{own}][{referenced}].")


def script_tool_turn(llm_api: FakeLlmServer) -> FakeLlmApi:
    """The turn every stage answers: understood, graded, a lookup of 제30조, the streamed answer, verified."""
    return llm_api.script(
        understand=[as_json({"standalone_question": QUESTION, "route": "search", "compound": False,
                             "search_queries": [QUESTION]})],
        grade=[graded],
        answer=[tool_calls(("lookup_article", {"doc": "취업규칙", "article": "제30조"})), answer_citing_both],
        verify=[as_json({"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": True}]})],
        followups=[as_json({"questions": ["휴직은 최대 얼마나 할 수 있어?"]})])
