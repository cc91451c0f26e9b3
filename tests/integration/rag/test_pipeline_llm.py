"""The pipeline on Claude over the sample regulations, with the Messages API mocked at the HTTP layer (respx).

Real Kiwi, embedded Chroma and the sample index (session fixtures); the fake API tells the stages apart by their
system prompt, so each test scripts what every stage's call answers and asserts on what the API received.
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Callable
from typing import Any

import pytest

from rag import messages
from rag.llm import AnthropicProvider, CircuitBreaker, ResilientProvider, RetryPolicy
from rag.models import AnswerEventKind, Message, Role
from rag.pipeline import AnswerPipeline, collect
from rag.retrieval.retriever import HybridRetriever
from rag.stages.factory import StageTimeouts, build_stages
from tests.fakes.clock import RecordedSleeps
from tests.fakes.llm_api import ANTHROPIC_URL, FakeLlmApi, Reply, as_json, stalls_after, status, streamed

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"
LEAVE_ANSWER = "1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 줘요 [1]."
FOLLOWUP_BLOCK = "\n<후속질문>\n반차로도 쓸 수 있어?\n연차 신청은 언제까지 해야 해?"


def claude_api(**scripts: list) -> FakeLlmApi:
    """The Messages API, scripted per stage (tests/fakes/llm_api.py); an unscripted call answers 500."""
    return FakeLlmApi("anthropic", **scripts)


def stream(*deltas: str, followups: bool = True) -> Reply:
    """A streamed text answer; the follow-up block last."""
    return streamed(*deltas, FOLLOWUP_BLOCK) if followups else streamed(*deltas)


def understood(question: str = LEAVE_QUESTION, **fields: Any) -> Reply:
    data = {"standalone_question": question, "route": "search", "compound": False, "search_queries": [question],
            "keywords": [], "intent": question, "answer_style": "concise"}
    data.update(fields)
    return as_json(data)


def passes(*labels: str, score: int = 90) -> Callable[[str, dict[str, Any]], Reply]:
    """A grade that names the passages with these labels as the relevant ones (their numbers vary by ranking)."""

    def reply(_: str, body: dict[str, Any]) -> Reply:
        content = body["messages"][0]["content"]
        numbers = [int(n) for label in labels for n in re.findall(rf"^\[(\d+)\] {re.escape(label)} ", content, re.M)]
        return as_json({"score": score, "missing": [], "relevant": numbers})

    return reply


# --- fixtures -------------------------------------------------------------------------------------------


def probed(base: HybridRetriever, *, together: int = 0) -> HybridRetriever:
    """A copy of `base` whose `search` records queries; the first `together` searches wait for each other, which
    only searches running in parallel can do. `search_many` of the copy goes through it."""
    retriever = copy.copy(base)
    retriever.queries = []
    arrived = asyncio.Event()

    async def search(query: str, **options: Any):
        retriever.queries.append(query)
        if len(retriever.queries) <= together:
            if len(retriever.queries) == together:
                arrived.set()
            async with asyncio.timeout(5):  # sequential searches would never all arrive
                await arrived.wait()
        return await base.search(query, **options)

    retriever.search = search
    return retriever


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()


@pytest.fixture
def make_pipeline(sample_components, respx_mock, sleeps):
    def make(claude: FakeLlmApi, *, timeouts: StageTimeouts | None = None, together: int = 0):
        respx_mock.post(ANTHROPIC_URL).mock(side_effect=claude.handler)
        provider = AnthropicProvider(api_key="test-key", base_url=ANTHROPIC_URL.removesuffix("/v1/messages"),
                                     fast_model="claude-test-fast", strong_model="claude-test-strong")
        llm = ResilientProvider(provider, retry=RetryPolicy(max_attempts=3), sleep=sleeps, jitter=lambda: 0.5,
                                breaker=CircuitBreaker(failure_threshold=4, cooldown_s=30.0))
        c = sample_components
        retriever = probed(c.retriever, together=together)
        stages = build_stages(llm=llm, corpus=c.corpus, tokenizer=c.tokenizer, lookup=c.lookup,
                              analyzer=c.retriever.analyzer, timeouts=timeouts)
        return AnswerPipeline(stages=stages, retriever=retriever)
    return make


def streamed_text(events) -> str:
    return "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA)


def labels(answer) -> list[str]:
    return [c.label for c in answer.citations]


# --- tests ----------------------------------------------------------------------------------------------


async def test_happy_path_streams_a_cited_answer_in_three_calls(make_pipeline):
    claude = claude_api(understand=[understood()], grade=[passes("취업규칙 제20조")],
                        answer=[stream("1년간 80퍼센트 이상 출근한 직원에게는 ", "15일의 연차유급휴가를 줘요 [1].",
                                       "\n<후속", "질문>\n3년 넘게 일하면 연차가 늘어나?\n반차로도 쓸 수 있어?",
                                       followups=False)])
    answer, events = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert streamed_text(events) == LEAVE_ANSWER + "\n"  # never the marker or the questions below it
    assert answer.text == LEAVE_ANSWER
    assert labels(answer) == ["취업규칙 제20조 제1항"]
    assert answer.followups == ("3년 넘게 일하면 연차가 늘어나?", "반차로도 쓸 수 있어?")
    assert answer.llm_calls == 3
    assert {stage: claude.calls(stage) for stage in claude.bodies} == {"understand": 1, "grade": 1, "answer": 1}
    assert claude.bodies["answer"][0]["model"] == "claude-test-strong"
    assert "[1] 취업규칙 제20조(연차유급휴가)" in claude.user_text("answer")


async def test_a_compound_question_searches_its_parts_in_parallel_and_cites_both(make_pipeline):
    question = "병가는 며칠까지 쓸 수 있고 출장 숙박비 한도는 얼마야?"
    parts = ["병가는 며칠까지 쓸 수 있어?", "출장 숙박비 한도는 얼마야?"]
    claude = claude_api(
        understand=[understood(question, compound=True, sub_questions=parts,
                               search_queries=["병가 일수", "국내 출장 숙박비 한도"])],
        grade=[passes("취업규칙 제23조", "여비 규정 제5조")],
        answer=[stream("**병가**\n연간 30일 이내의 병가를 받을 수 있어요 [1].\n",
                       "**숙박비**\n숙박비는 1박당 8만원을 한도로 실비를 지급해요 [2].")])
    pipeline = make_pipeline(claude, together=3)
    answer, _ = await collect(pipeline, question)

    assert pipeline.retriever.queries == [question, "병가 일수", "국내 출장 숙박비 한도"]
    assert labels(answer) == ["취업규칙 제23조 제1항", "여비 규정 제5조 제3항"]
    prompt = claude.user_text("answer")
    assert "1. 병가는 며칠까지 쓸 수 있어? — 관련 조문: [1]" in prompt
    assert "2. 출장 숙박비 한도는 얼마야? — 관련 조문: [2]" in prompt


async def test_a_failed_grade_rewrites_once_and_searches_again(make_pipeline):
    question = "3년 넘게 다니면 연차 더 줘?"
    claude = claude_api(
        understand=[understood(question)],
        grade=[as_json({"score": 40, "missing": ["근속연수에 따른 가산휴가"], "relevant": []}),
               passes("취업규칙 제20조")],
        rewrite=[as_json({"query": "연차유급휴가 3년 이상 근속 가산휴가"})],
        answer=[stream("3년 이상 근속한 직원에게는 최초 1년을 초과하는 근속연수 매 2년에 대하여 ",
                       "1일을 가산한 휴가를 줘요 [1].")])
    pipeline = make_pipeline(claude)
    answer, events = await collect(pipeline, question)

    assert pipeline.retriever.queries == [question, "연차유급휴가 3년 이상 근속 가산휴가"]
    assert "- 근속연수에 따른 가산휴가" in claude.user_text("rewrite")
    assert all(claude.user_text("grade", i).endswith(f"<질문>\n{question}\n</질문>") for i in range(2))
    assert messages.STATUS_RESEARCHING in [e.text for e in events]
    assert labels(answer) == ["취업규칙 제20조 제3항"]
    assert answer.llm_calls == 5


async def test_malformed_json_falls_back_to_the_offline_stages(make_pipeline):
    claude = claude_api(understand=[as_json({"route": "search"})],  # required keys missing
                        grade=[streamed("네, 충분합니다.")],  # text, no tool call at all
                        answer=[stream(LEAVE_ANSWER)])
    answer, _ = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert (claude.calls("understand"), claude.calls("grade")) == (1, 1)  # invalid output is not retried
    assert "route: search" in answer.notes  # the offline understanding
    assert any(n.startswith("grade(offline): ") for n in answer.notes)
    assert answer.text == LEAVE_ANSWER
    assert labels(answer) == ["취업규칙 제20조 제1항"]


async def test_a_rate_limit_is_retried_and_the_answer_is_unchanged(make_pipeline, sleeps):
    claude = claude_api(understand=[status(429, {"retry-after": "0"}, "rate_limit_error"), understood()],
                        grade=[passes("취업규칙 제20조")], answer=[stream(LEAVE_ANSWER)])
    answer, _ = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert claude.calls("understand") == 2
    assert sleeps.delays == [0.0]  # the server's retry-after
    assert answer.text == LEAVE_ANSWER
    assert answer.llm_calls == 3  # a retry is part of the same call


async def test_server_errors_open_the_breaker_and_the_regulations_are_quoted_with_a_note(make_pipeline):
    claude = claude_api()  # 500 to everything
    answer, events = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert messages.EXTRACTIVE_SUPPORT in answer.text and not answer.text.startswith(messages.EXTRACTIVE_SUPPORT)
    assert answer.text.endswith(messages.OFFLINE_NOTE)
    assert "취업규칙 제20조 제1항" in labels(answer)
    assert (claude.calls("understand"), claude.calls("grade"), claude.calls("answer")) == (3, 1, 0)
    assert not [e for e in events if e.kind == AnswerEventKind.ERROR]


async def test_a_stream_that_goes_silent_keeps_what_was_shown_and_says_so(make_pipeline):
    shown = ("1년간 80퍼센트 이상 출근하면 15일의 연차유급휴가를 줘요 [1]. ", "다만 입사 첫해에는")
    claude = claude_api(understand=[understood()], grade=[passes("취업규칙 제20조")],
                        answer=[stalls_after(*shown)])
    answer, events = await collect(make_pipeline(claude, timeouts=StageTimeouts(stream_hang_s=0.3)), LEAVE_QUESTION)

    assert streamed_text(events) == "".join(shown)
    assert answer.text == f"{''.join(shown).rstrip()}\n\n{messages.STREAM_INTERRUPTED}"
    assert labels(answer) == ["취업규칙 제20조 제1항"]


async def test_the_verifier_removes_a_claim_its_source_does_not_support(make_pipeline):
    unsupported = "입사 첫날부터 25일을 미리 당겨 쓸 수도 있어요 [1]."
    claude = claude_api(understand=[understood()], grade=[passes("취업규칙 제20조")],
                        answer=[stream(f"{LEAVE_ANSWER} ", unsupported)],
                        verify=[as_json({"verdicts": [{"claim": 1, "supported": False}]})],
                        revise=[status(400, error_type="invalid_request_error")])
    answer, events = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert streamed_text(events).startswith(f"{LEAVE_ANSWER} {unsupported}")
    assert answer.text == f"{LEAVE_ANSWER}\n\n{messages.UNVERIFIED_NOTE}"
    assert "1. 입사 첫날부터 25일을" in claude.user_text("verify")
    assert claude.calls("revise") == 1


async def test_a_revision_replaces_an_answer_with_an_unsupported_claim(make_pipeline):
    claude = claude_api(understand=[understood()], grade=[passes("취업규칙 제20조")],
                        answer=[stream("연차는 1년에 20일을 줘요 [1].")],
                        verify=[as_json({"verdicts": [{"claim": 1, "supported": False}]})],
                        revise=[stream(LEAVE_ANSWER, followups=False)])
    answer, _ = await collect(make_pipeline(claude), LEAVE_QUESTION)

    assert answer.text == LEAVE_ANSWER
    assert "<주장>\n- 연차는 1년에 20일을 줘요 [1].\n</주장>" in claude.user_text("revise")
    assert claude.calls("verify") == 1  # the revision is confirmed offline


async def test_a_follow_up_is_made_standalone_before_searching(make_pipeline):
    history = (Message(role=Role.USER, content=LEAVE_QUESTION), Message(role=Role.ASSISTANT, content=LEAVE_ANSWER))
    standalone = "입사 후 3년 넘게 근속하면 연차유급휴가는 며칠인가?"
    claude = claude_api(understand=[understood(standalone)], grade=[passes("취업규칙 제20조")],
                        answer=[stream("3년 이상 근속한 직원에게는 근속연수 매 2년에 대하여 1일을 가산해요 [1].")])
    pipeline = make_pipeline(claude)
    answer, _ = await collect(pipeline, "그럼 3년 넘게 일하면?", history=history)

    assert pipeline.retriever.queries == [standalone]
    assert f"enhanced with history: {standalone}" in answer.notes
    assert "<대화 기록>\n[user] 입사 1년 지나면 연차 며칠 받아?" in claude.user_text("understand")


async def test_a_reference_is_looked_up_without_any_call(make_pipeline):
    claude = claude_api()
    answer, _ = await collect(make_pipeline(claude), "취업규칙 제20조")
    assert labels(answer) == ["취업규칙 제20조"]
    assert (answer.llm_calls, claude.bodies) == (0, {})
