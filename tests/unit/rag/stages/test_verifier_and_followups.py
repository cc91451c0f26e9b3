"""LlmVerifier (offline confirmation first, one call for the rest) and LlmFollowupSuggester."""

import pytest

from rag.llm import LlmRequestFailed
from rag.models import Citation
from rag.stages.followups import LlmFollowupSuggester, OfflineFollowupSuggester
from rag.stages.verifier import LlmVerifier, OfflineVerifier, split_sentences

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"


@pytest.fixture(scope="module")
def leave_citation(samples):
    chunk = next(c for c in samples.corpus.chunks if c.label == "취업규칙 제20조")
    return Citation(index=1, doc=chunk.doc, article=chunk.article, title=chunk.title, chunk_id=chunk.chunk_id)


@pytest.fixture
def make_verifier(samples):
    def make(llm):
        return LlmVerifier(llm, fallback=OfflineVerifier(samples.corpus, samples.tokenizer))
    return make


def test_sentences_keep_the_markers_that_close_them():
    assert split_sentences("15일이에요. [1] 반일 단위로 쓸 수 있어요 [1]. 1.5일은 안 돼요") == [
        "15일이에요. [1]", "반일 단위로 쓸 수 있어요 [1].", "1.5일은 안 돼요"]


class TestLlmVerifier:
    async def test_a_closely_worded_claim_is_confirmed_without_a_call(self, make_verifier, scripted_llm,
                                                                      leave_citation):
        llm = scripted_llm()
        text = "1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 줘요 [1].\n"
        result = await make_verifier(llm).run(text, (leave_citation,))
        assert (result.supported, result.text) == (True, text)
        assert llm.requests == []

    async def test_removes_the_claim_the_llm_finds_unsupported(self, make_verifier, scripted_llm, leave_citation):
        llm = scripted_llm(replies=[{"verdicts": [{"claim": 1, "supported": False}]}])
        text = "연차는 1년에 15일이에요 [1]. 입사 첫날부터 25일을 미리 당겨 쓸 수도 있어요 [1].\n출처를 확인하세요."
        result = await make_verifier(llm).run(text, (leave_citation,))
        assert not result.supported
        assert result.removed == ("입사 첫날부터 25일을 미리 당겨 쓸 수도 있어요 [1].",)
        assert result.text == "연차는 1년에 15일이에요 [1].\n출처를 확인하세요."
        assert "1. 입사 첫날부터 25일을" in llm.requests[0].messages[0].content

    async def test_keeps_a_paraphrase_the_llm_confirms(self, make_verifier, scripted_llm, leave_citation):
        llm = scripted_llm(replies=[{"verdicts": [{"claim": 1, "supported": True}]}])
        text = "새로 들어온 분도 한 달을 빠짐없이 나오면 하루씩 쉴 수 있어요 [1]."
        result = await make_verifier(llm).run(text, (leave_citation,))
        assert (result.supported, result.by) == (True, "llm")

    async def test_an_unavailable_llm_leaves_the_judgement_to_token_support(self, make_verifier, scripted_llm,
                                                                           leave_citation):
        llm = scripted_llm(replies=[LlmRequestFailed("timeout", retryable=True)])
        text = "연차유급휴가는 25일을 한도로 해요 [1].\n주식 배당금은 분기마다 지급돼요 [1]."
        result = await make_verifier(llm).run(text, (leave_citation,))
        assert result.by == "offline"
        assert result.removed == ("주식 배당금은 분기마다 지급돼요 [1].",)

    async def test_a_marker_without_a_source_is_unsupported(self, make_verifier, scripted_llm, leave_citation):
        result = await make_verifier(scripted_llm()).run("연차는 15일이에요 [7].", (leave_citation,))
        assert result.removed == ("연차는 15일이에요 [7].",)


class TestLlmFollowupSuggester:
    async def test_keeps_the_generators_own_suggestions_without_a_call(self, scripted_llm):
        llm = scripted_llm()
        followups = await LlmFollowupSuggester(llm, fallback=OfflineFollowupSuggester()).run(
            LEAVE_QUESTION, [], set(), proposed=("- 반차도 쓸 수 있어?", "연차 신청은 언제까지 해?", LEAVE_QUESTION))
        assert followups == ("반차도 쓸 수 있어?", "연차 신청은 언제까지 해?")
        assert llm.requests == []

    async def test_asks_about_the_retrieved_articles_when_none_were_proposed(self, samples, scripted_llm):
        hits = samples.retriever.search_sync(LEAVE_QUESTION, k=4)
        llm = scripted_llm(replies=[{"questions": ["연차 사용을 회사가 촉구할 수 있어?", "경조휴가는 며칠이야?"]}])
        followups = await LlmFollowupSuggester(llm, fallback=OfflineFollowupSuggester()).run(
            LEAVE_QUESTION, hits, set())
        assert followups == ("연차 사용을 회사가 촉구할 수 있어?", "경조휴가는 며칠이야?")
        assert "- 취업규칙 제20조(연차유급휴가)" in llm.requests[0].messages[0].content

    async def test_falls_back_to_article_titles(self, samples, scripted_llm):
        hits = samples.retriever.search_sync(LEAVE_QUESTION, k=4)
        cited = {hits[0].chunk.chunk_id}
        llm = scripted_llm(replies=[LlmRequestFailed("overloaded", retryable=True)])
        followups = await LlmFollowupSuggester(llm, fallback=OfflineFollowupSuggester()).run(
            LEAVE_QUESTION, hits, cited)
        assert followups == await OfflineFollowupSuggester().run(LEAVE_QUESTION, hits, cited)
        assert followups and all(f.endswith("에 대해 알려줘") for f in followups)


class TestOfflineVerifier:
    async def test_removes_a_cited_line_its_source_does_not_contain(self, samples, leave_citation):
        text = "관련 규정은 다음과 같아요.\n- 15일의 연차유급휴가를 준다 [1]\n- 주식 배당금은 분기마다 지급한다 [1]"
        result = await OfflineVerifier(samples.corpus, samples.tokenizer).run(text, (leave_citation,))
        assert result.text == "관련 규정은 다음과 같아요.\n- 15일의 연차유급휴가를 준다 [1]"
        assert result.removed == ("- 주식 배당금은 분기마다 지급한다 [1]",)
