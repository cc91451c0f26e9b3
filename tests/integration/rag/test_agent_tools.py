"""The answer's LLM may consult tools (lookup_article, search_regulations, regulation_overview): both APIs over
HTTP (respx), on the sample regulations. A cross-referenced article is fetched, shown as a status line, cited;
the rounds stay within two and within the turn's call budget."""

from __future__ import annotations

import json
import re

import pytest

from rag.models import AnswerEventKind
from rag.pipeline import collect
from tests.fakes.llm_api import FakeLlmApi, Reply, as_json, streamed, tool_calls
from tests.fakes.llm_pipeline import llm_pipeline

QUESTION = "휴직 기간도 근속연수에 들어가?"
UNDERSTOOD = as_json({"standalone_question": QUESTION, "route": "search", "compound": False,
                      "search_queries": [QUESTION]})

pytestmark = pytest.mark.parametrize("api", ["anthropic", "openai"])


def graded(text: str, body: dict) -> Reply:
    """Passes, naming 취업규칙 제31조 as the relevant passage (its number depends on the ranking)."""
    numbers = [int(n) for n in re.findall(r"\[(\d+)\] 취업규칙 제31조 ", text.replace("\\n", "\n"))]
    return as_json({"score": 90, "missing": [], "relevant": numbers[:1]})


def number_of(label: str, text: str) -> int:
    found = re.findall(rf"\[(\d+)\] {re.escape(label)}\(", text.replace("\\n", "\n"))
    assert found, f"{label} is not among the sources sent"
    return int(found[-1])


def answer_with_both(text: str, body: dict) -> Reply:
    own, referenced = number_of("취업규칙 제31조", text), number_of("취업규칙 제30조", text)
    return streamed(f"휴직 기간은 근속연수에 포함돼요 [{own}]. 다만 회사가 인정하는 학업이나 연수를 위한 휴직 "
                    f"기간은 포함하지 않아요 [{own}][{referenced}].")


def tools_offered(api: str, body: dict) -> list[str]:
    tools = body.get("tools") or []
    return [t["name"] if api == "anthropic" else t["function"]["name"] for t in tools]


async def test_a_cross_referenced_article_is_looked_up_shown_and_cited_within_five_calls(
        api, sample_components, respx_mock):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[graded],
                      answer=[tool_calls(("lookup_article", {"doc": "취업규칙", "article": "제30조"})),
                              answer_with_both],
                      verify=[as_json({"verdicts": [{"claim": 1, "supported": True}]})])
    answer, events = await collect(llm_pipeline(api, sample_components, respx_mock, fake), QUESTION)

    statuses = [e.text for e in events if e.kind == AnswerEventKind.STATUS]
    assert "제30조를 확인하고 있어요…" in statuses
    assert [c.label for c in answer.citations] == ["취업규칙 제31조 제1항", "취업규칙 제30조 제1항"]
    # understand, grade, a tool round, the answer, and one verify call for the paraphrased exception
    assert answer.llm_calls == fake.calls() == 5
    assert tools_offered(api, fake.bodies["answer"][0]) == ["lookup_article", "search_regulations",
                                                             "regulation_overview"]
    second = fake.sent("answer", 1)
    assert "<도구 결과>" in second and "회사가 인정하는 학업이나 연수" in second  # the article, fenced
    if api == "anthropic":
        assert '"type": "tool_result"' in second and '"tool_use_id": "toolu_0"' in second
    else:
        assert '"role": "tool"' in second and '"tool_call_id": "call_0"' in second


async def test_tool_rounds_stop_at_two_and_the_answer_comes_from_the_third_call(api, sample_components, respx_mock):
    search = tool_calls(("search_regulations", {"query": "휴직"}))
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[graded],
                      answer=[search, tool_calls(("regulation_overview", {"doc": "취업규칙"})),
                              streamed("휴직 기간은 근속연수에 포함돼요 [1].")])
    answer, events = await collect(llm_pipeline(api, sample_components, respx_mock, fake), QUESTION)

    assert [len(tools_offered(api, b)) for b in fake.bodies["answer"]] == [3, 3, 0]
    assert answer.llm_calls == 5
    assert "취업규칙의 구성을 확인하고 있어요…" in [e.text for e in events if e.kind == AnswerEventKind.STATUS]
    assert "제30조 (휴직 사유)" in fake.sent("answer", 2) or "제30조 휴직 사유" in fake.sent("answer", 2)
    assert answer.text.startswith("휴직 기간은 근속연수에 포함돼요")


async def test_no_tools_are_offered_when_the_budget_leaves_no_room_for_a_round(api, sample_components, respx_mock):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[graded],
                      answer=[streamed("휴직 기간은 근속연수에 포함돼요 [1].")])
    answer, _ = await collect(llm_pipeline(api, sample_components, respx_mock, fake, max_llm_calls=3), QUESTION)

    assert tools_offered(api, fake.bodies["answer"][0]) == []
    assert answer.llm_calls == 3


async def test_a_preamble_before_a_tool_call_is_never_shown(api, sample_components, respx_mock):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[graded],
                      answer=[tool_calls(("lookup_article", {"doc": "취업규칙", "article": "제30조"}),
                                         text="제30조를 먼저 확인해 볼게요."), answer_with_both])
    answer, events = await collect(llm_pipeline(api, sample_components, respx_mock, fake), QUESTION)

    shown = "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA)
    assert "먼저 확인해 볼게요" not in shown and "먼저 확인해 볼게요" not in answer.text
    assert shown.startswith("휴직 기간은 근속연수에 포함돼요")
    assert "먼저 확인해 볼게요" not in json.loads(fake.sent("answer", 1))["messages"][0]["content"]
