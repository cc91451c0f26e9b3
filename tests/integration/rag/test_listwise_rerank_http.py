"""LlmListwiseReranker through the real providers and SDKs against the fake APIs over HTTP (respx): the model's
order, sent back as the forced record_result tool call, reorders the candidates; a failed call leaves the
heuristic order standing."""

from __future__ import annotations

import pytest

from rag.retrieval.rerank import HeuristicReranker, LlmListwiseReranker
from tests.fakes.llm_api import HANG, NON_JSON, FakeLlmApi, as_json, status
from tests.fakes.llm_pipeline import fake_provider

QUESTION = "아파서 며칠 쉬어야 하는데 병가는 얼마나 돼?"

pytestmark = pytest.mark.parametrize("api", ["anthropic", "openai"])


@pytest.fixture
def candidates(sample_components):
    analyzer = sample_components.retriever.analyzer
    hits = sample_components.retriever.search_sync(QUESTION, k=5)
    assert len(hits) >= 3
    return analyzer.analyze(QUESTION), hits


def labels(hits) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


async def test_the_models_order_reorders_the_candidates(api, candidates, respx_mock):
    query, hits = candidates
    fallback = HeuristicReranker()
    before = fallback.rerank(query, hits)
    fake = FakeLlmApi(api, rerank=[as_json({"order": [3, 1]})])

    ranked = await LlmListwiseReranker(fake_provider(api, respx_mock, fake), fallback=fallback).arerank(query, hits)

    assert labels(ranked) == labels([before[2], before[0], before[1], *before[3:]]) != labels(before)
    assert fake.calls("rerank") == 1
    sent = fake.user_text("rerank")
    assert f"질문: {query.all_text}" in sent and "[3] " in sent  # numbered passages and the question went out


@pytest.mark.parametrize("failure", [status(500), NON_JSON, HANG], ids=["500", "non-json", "hang"])
async def test_a_failed_call_keeps_the_heuristic_order(api, candidates, respx_mock, failure):
    query, hits = candidates
    fallback = HeuristicReranker()
    fake = FakeLlmApi(api, rerank=[failure])
    reranker = LlmListwiseReranker(fake_provider(api, respx_mock, fake), fallback=fallback, timeout_s=0.5)

    ranked = await reranker.arerank(query, hits)

    assert labels(ranked) == labels(fallback.rerank(query, hits))
    assert fake.calls("rerank") == 1
