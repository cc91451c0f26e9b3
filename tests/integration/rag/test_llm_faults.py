"""Every way the LLM can fail, on both APIs (Anthropic Messages, OpenAI-compatible) over HTTP (respx).

The pipeline runs on the sample regulations with real Kiwi and Chroma; a scripted fake API answers each stage.
Each test asserts what the user gets: a cited answer or a clear note, never an empty answer or an error, and how
many calls reached the API.
"""

from __future__ import annotations

import pytest

from rag import messages
from rag.llm import CircuitBreaker, ResilientProvider, RetryPolicy
from rag.llm.anthropic import AnthropicProvider
from rag.llm.openai_compat import OpenAICompatibleProvider
from rag.models import AnswerEventKind
from rag.pipeline import AnswerPipeline, PipelineConfig, collect
from rag.stages.factory import StageTimeouts, build_stages
from tests.fakes.clock import FakeClock, RecordedSleeps
from tests.fakes.llm_api import (
    EMPTY_STREAM,
    HANG,
    NON_JSON,
    OPENAI_BASE_URL,
    FakeLlmApi,
    Reply,
    as_json,
    status,
    streamed,
)

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"
LEAVE_ANSWER = "1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 줘요 [1]."
FOLLOWUPS = "\n<후속질문>\n반차로도 쓸 수 있어?\n연차 신청은 언제까지 해야 해?"
UNDERSTOOD = as_json({"standalone_question": LEAVE_QUESTION, "route": "search", "compound": False,
                      "search_queries": [LEAVE_QUESTION], "keywords": [], "intent": "연차 일수",
                      "answer_style": "concise"})
PASSED = as_json({"score": 90, "missing": [], "relevant": [1]})
ANSWER = streamed("1년간 80퍼센트 이상 출근한 직원에게는 ", "15일의 연차유급휴가를 줘요 [1].", FOLLOWUPS)
# Small hang timeouts: the fake stalls forever, so a test waits this long once, not a real LLM's 8 s.
TIMEOUTS = StageTimeouts(structured_s=5.0, structured_hang_s=0.2, stream_hang_s=0.3)

pytestmark = pytest.mark.parametrize("api", ["anthropic", "openai"])


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_pipeline(sample_components, respx_mock, clock):
    def make(fake: FakeLlmApi, *, max_llm_calls: int = 5) -> AnswerPipeline:
        respx_mock.post(fake.url).mock(side_effect=fake.handler)
        if fake.api == "anthropic":
            inner = AnthropicProvider(api_key="test-key", base_url="http://llm.test", fast_model="claude-fast",
                                      strong_model="claude-strong")
        else:
            inner = OpenAICompatibleProvider(base_url=OPENAI_BASE_URL, fast_model="qwen-small")
        llm = ResilientProvider(inner, retry=RetryPolicy(max_attempts=3), sleep=RecordedSleeps(),
                                jitter=lambda: 0.5, breaker=CircuitBreaker(failure_threshold=3, cooldown_s=30.0,
                                                                           clock=clock))
        c = sample_components
        stages = build_stages(llm=llm, corpus=c.corpus, tokenizer=c.tokenizer, lookup=c.lookup,
                              analyzer=c.retriever.analyzer, timeouts=TIMEOUTS, search=c.retriever)
        pipeline = AnswerPipeline(stages=stages, retriever=c.retriever,
                                  config=PipelineConfig(max_llm_calls=max_llm_calls))
        pipeline.llm = llm  # for the breaker assertions below
        return pipeline
    return make


def streamed_text(events) -> str:
    return "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA)


def errors(events) -> list[str]:
    return [e.text for e in events if e.kind == AnswerEventKind.ERROR]


def labels(answer) -> list[str]:
    return [c.label for c in answer.citations]


def assert_quoted_with_note(answer, events) -> None:
    """The offline answer: quoted articles with citations, the note, never empty, never an error."""
    assert errors(events) == []
    assert messages.EXTRACTIVE_SUPPORT in answer.text  # a cited lead, then the quoted articles
    assert messages.OFFLINE_NOTE in answer.text
    assert "취업규칙 제20조" in " ".join(labels(answer))


async def test_the_common_path_is_three_calls_with_a_cited_answer(api, make_pipeline):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[ANSWER])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert streamed_text(events) == LEAVE_ANSWER + "\n"
    assert labels(answer) == ["취업규칙 제20조 제1항"]
    assert answer.followups == ("반차로도 쓸 수 있어?", "연차 신청은 언제까지 해야 해?")
    assert answer.llm_calls == fake.calls() == 3
    assert set(answer.llm_tokens) == {"understand", "grade", "generate"}


@pytest.mark.parametrize("stage", ["understand", "grade"])
async def test_a_200_body_that_is_not_json_falls_back_for_that_stage_only(api, stage, make_pipeline):
    scripts = {"understand": [UNDERSTOOD], "grade": [PASSED], "answer": [ANSWER], stage: [NON_JSON]}
    fake = FakeLlmApi(api, **scripts)
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert errors(events) == []
    assert answer.text == LEAVE_ANSWER
    assert "취업규칙 제20조" in labels(answer)[0]
    assert fake.calls(stage) == 1  # a reply that is not the API's is not retried


async def test_an_answer_stream_body_that_is_not_json_gives_the_quoted_answer(api, make_pipeline):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[NON_JSON])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)


@pytest.mark.parametrize("empty", [EMPTY_STREAM, streamed()], ids=["empty-body", "well-formed-without-text"])
async def test_an_answer_stream_with_no_text_gives_the_quoted_answer_without_llm_verify_or_followups(
        api, empty, make_pipeline):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[empty])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)
    assert streamed_text(events).strip()  # the user saw the quotes, never an empty answer
    assert (fake.calls("verify"), fake.calls("followups")) == (0, 0)
    assert answer.llm_calls == 3


async def test_an_answer_of_only_follow_up_questions_gives_the_quoted_answer(api, make_pipeline):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[streamed("  \n", FOLLOWUPS)])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)


async def test_a_hanging_llm_gives_the_quoted_answer_after_one_timeout_and_the_next_turn_skips_it(
        api, make_pipeline):
    fake = FakeLlmApi(api, understand=[HANG], grade=[HANG], answer=[HANG])
    pipeline = make_pipeline(fake)
    answer, events = await collect(pipeline, LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)
    assert events[0].kind == AnswerEventKind.STATUS  # the first thing the user sees comes at once
    assert fake.calls() == 1  # the hang opened the breaker: no other stage waited
    assert pipeline.llm.breaker_state == answer.llm_breaker == "open"
    assert pipeline.llm.usage.hangs == 1

    again, events = await collect(pipeline, "병가는 며칠까지 쓸 수 있어?")
    assert errors(events) == [] and again.citations
    assert fake.calls() == 1 and again.llm_calls == 0


async def test_after_the_cooldown_one_probe_closes_the_breaker(api, make_pipeline, clock):
    fake = FakeLlmApi(api, understand=[HANG, UNDERSTOOD], grade=[PASSED], answer=[ANSWER])
    pipeline = make_pipeline(fake)
    await collect(pipeline, LEAVE_QUESTION)
    assert pipeline.llm.breaker_state == "open"

    clock.advance(30)
    answer, _ = await collect(pipeline, LEAVE_QUESTION)
    assert pipeline.llm.breaker_state == "closed"
    assert answer.text == LEAVE_ANSWER


async def test_an_answer_stream_that_hangs_before_its_first_byte_gives_the_quoted_answer(api, make_pipeline):
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[HANG])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)
    assert fake.calls("answer") == 1


async def test_a_stream_cut_off_after_text_keeps_the_text_and_says_so(api, make_pipeline):
    cut = Reply("truncated", deltas=("1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 줘요 [1]. ", "다만"))
    fake = FakeLlmApi(api, understand=[UNDERSTOOD], grade=[PASSED], answer=[cut])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert errors(events) == []
    assert streamed_text(events).startswith("1년간 80퍼센트")
    assert answer.text.endswith(messages.STREAM_INTERRUPTED)
    assert labels(answer) == ["취업규칙 제20조 제1항"]


async def test_server_errors_open_the_breaker_and_the_regulations_are_quoted(api, make_pipeline):
    fake = FakeLlmApi(api)  # 500 to everything
    pipeline = make_pipeline(fake)
    answer, events = await collect(pipeline, LEAVE_QUESTION)

    assert_quoted_with_note(answer, events)
    assert fake.calls() == 3  # three attempts of the first call; then the breaker answers
    assert pipeline.llm.breaker_state == "open"


async def test_a_rate_limit_is_retried_after_the_servers_hint(api, make_pipeline):
    fake = FakeLlmApi(api, understand=[status(429, {"retry-after": "0"}), UNDERSTOOD], grade=[PASSED],
                      answer=[ANSWER])
    answer, _ = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert answer.text == LEAVE_ANSWER
    assert (fake.calls("understand"), answer.llm_calls) == (2, 3)


async def test_the_worst_path_stays_within_five_calls(api, make_pipeline):
    fake = FakeLlmApi(
        api, understand=[UNDERSTOOD],
        grade=[as_json({"score": 30, "missing": ["가산휴가"], "relevant": []}), PASSED],
        rewrite=[as_json({"query": "연차유급휴가 가산"})],
        answer=[streamed("연차는 1년에 30일을 줘요 [1].")],
        verify=[as_json({"verdicts": [{"claim": 1, "supported": False}]})],
        revise=[streamed(LEAVE_ANSWER)], followups=[as_json({"questions": ["반차는?"]})])
    answer, events = await collect(make_pipeline(fake), LEAVE_QUESTION)

    assert errors(events) == []
    assert answer.llm_calls == fake.calls() == 5
    assert (fake.calls("verify"), fake.calls("revise"), fake.calls("followups")) == (0, 0, 0)
    assert answer.citations  # the unsupported claim was removed offline and the note says so
    assert messages.UNVERIFIED_NOTE in answer.text
