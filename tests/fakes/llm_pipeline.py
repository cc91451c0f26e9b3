"""An LLM pipeline over the sample components, talking to a fake API (`FakeLlmApi`) over HTTP (respx):
Anthropic or OpenAI-compatible, one attempt per call, a breaker that stays closed, short stage timeouts."""

from __future__ import annotations

from rag.llm import CircuitBreaker, ResilientProvider, RetryPolicy
from rag.llm.anthropic import AnthropicProvider
from rag.llm.openai_compat import OpenAICompatibleProvider
from rag.pipeline import AnswerPipeline, PipelineConfig
from rag.stages import StageTimeouts, build_stages
from tests.fakes.clock import RecordedSleeps
from tests.fakes.llm_api import OPENAI_BASE_URL, FakeLlmApi


def llm_pipeline(api: str, components, respx_mock, fake: FakeLlmApi, *, max_llm_calls: int = 5) -> AnswerPipeline:
    respx_mock.post(fake.url).mock(side_effect=fake.handler)
    if api == "anthropic":
        inner = AnthropicProvider(api_key="k", base_url="http://llm.test", fast_model="f", strong_model="s")
    else:
        inner = OpenAICompatibleProvider(base_url=OPENAI_BASE_URL, fast_model="qwen")
    llm = ResilientProvider(inner, retry=RetryPolicy(max_attempts=1), sleep=RecordedSleeps(),
                            breaker=CircuitBreaker(failure_threshold=50))
    c = components
    stages = build_stages(llm=llm, corpus=c.corpus, tokenizer=c.tokenizer, lookup=c.lookup,
                          analyzer=c.retriever.analyzer, search=c.retriever,
                          timeouts=StageTimeouts(structured_s=2.0, stream_hang_s=2.0))
    return AnswerPipeline(stages=stages, retriever=c.retriever, config=PipelineConfig(max_llm_calls=max_llm_calls))
