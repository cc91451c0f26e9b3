"""The LLM verifier on an English explanation beside a Korean quote, through the real providers and SDKs against
the fake APIs over HTTP (respx): when the verify call fails, the offline fallback cannot match English words
against the Korean article, so it checks what it can (the numbers, and any Korean words the sentence quotes)
instead of removing every English sentence."""

from __future__ import annotations

import pytest

from rag.models import Citation
from rag.stages.verifier import LlmVerifier, OfflineVerifier
from tests.fakes.llm_api import FakeLlmApi, as_json, status
from tests.fakes.llm_pipeline import fake_provider

pytestmark = pytest.mark.parametrize("api", ["anthropic", "openai"])

EXPLAINED = ("After one year with at least 80 percent attendance you get 15 days of paid annual leave [1].\n"
             "「1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.」 [1]\n")


@pytest.fixture
def leave_citation(sample_components):
    chunk = next(c for c in sample_components.corpus.chunks if c.label == "취업규칙 제20조")
    return Citation(index=1, doc=chunk.doc, article=chunk.article, title=chunk.title, chunk_id=chunk.chunk_id)


def verifier(api, respx_mock, fake, sample_components) -> LlmVerifier:
    fallback = OfflineVerifier(sample_components.corpus, sample_components.tokenizer)
    return LlmVerifier(fake_provider(api, respx_mock, fake), fallback=fallback, timeout_s=0.5)


async def test_a_failed_call_keeps_the_english_explanation_its_article_supports(api, respx_mock, sample_components,
                                                                                leave_citation):
    fake = FakeLlmApi(api, verify=[status(500)])

    result = await verifier(api, respx_mock, fake, sample_components).run(EXPLAINED, (leave_citation,))

    assert fake.calls("verify") == 1  # an English sentence is never confirmed without asking
    assert (result.supported, result.text) == (True, EXPLAINED)


async def test_a_failed_call_still_removes_an_english_sentence_with_a_number_the_article_lacks(
        api, respx_mock, sample_components, leave_citation):
    fake = FakeLlmApi(api, verify=[status(500)])
    text = "You get 30 days of paid annual leave in your first year [1].\n"

    result = await verifier(api, respx_mock, fake, sample_components).run(text, (leave_citation,))

    assert result.removed == ("You get 30 days of paid annual leave in your first year [1].",)


async def test_the_model_judges_the_english_sentence_when_it_answers(api, respx_mock, sample_components,
                                                                     leave_citation):
    fake = FakeLlmApi(api, verify=[as_json({"verdicts": [{"claim": 1, "supported": False}]})])

    result = await verifier(api, respx_mock, fake, sample_components).run(EXPLAINED, (leave_citation,))

    assert result.removed == ("After one year with at least 80 percent attendance you get 15 days of paid annual "
                              "leave [1].",)
    assert "「1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.」 [1]" in result.text
