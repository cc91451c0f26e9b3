"""LlmGrader and LlmQueryRewriter over their offline siblings."""

import pytest

from rag.llm import LlmRequestFailed
from rag.stages.grader import LlmGrader, OfflineGrader
from rag.stages.rewriter import LlmQueryRewriter, OfflineQueryRewriter

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"


@pytest.fixture(scope="module")
def leave_hits(samples):
    return samples.retriever.search_sync(LEAVE_QUESTION, k=4)


def labels(hits, ids):
    by_id = {h.chunk.chunk_id: h.chunk.label for h in hits}
    return [by_id[i] for i in ids]


class TestLlmGrader:
    async def test_keeps_only_the_passages_it_names(self, samples, scripted_llm, leave_hits):
        number = next(i for i, h in enumerate(leave_hits, start=1) if h.chunk.label == "취업규칙 제20조")
        llm = scripted_llm(replies=[{"score": 92, "missing": [], "relevant": [number, 99]}])
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(
            LEAVE_QUESTION, leave_hits)
        assert (grade.passed, grade.by) == (True, "llm")
        assert labels(leave_hits, grade.relevant) == ["취업규칙 제20조"]
        sent = llm.requests[0].messages[0].content
        assert f"[{number}] 취업규칙 제20조 (연차유급휴가)" in sent
        assert sent.endswith(f"<질문>\n{LEAVE_QUESTION}\n</질문>")

    async def test_the_offline_answerability_is_given_as_a_prior(self, samples, scripted_llm):
        question = "사내 카페는 저녁 몇 시에 문을 닫아?"
        hits = samples.retriever.search_sync(question, k=4)
        llm = scripted_llm(replies=[{"score": 10, "missing": ["카페 운영 시간"], "relevant": []}])
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(question, hits)
        sent = llm.requests[0].messages[0].content
        assert "사전 판단" in sent and "카페" in sent.split("사전 판단")[1]
        assert not grade.passed and "카페" in grade.looked_for
        assert "카페" in grade.silent_on  # the refusal names the words the regulations lack, whichever grader

    async def test_a_folded_question_is_graded_on_its_own_words_with_the_earlier_one_as_context(self, samples,
                                                                                                 scripted_llm):
        asked = "카페는 몇 시에 닫아?"
        standalone = f"{LEAVE_QUESTION.rstrip('?')} {asked}"
        hits = samples.retriever.search_sync(standalone, k=4)
        llm = scripted_llm(replies=[{"score": 10, "missing": ["카페 운영 시간"], "relevant": []}])
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(
            standalone, hits, asked=asked)
        sent = llm.requests[0].messages[0].content
        assert sent.endswith(f"<대화 기록>\n{standalone}\n</대화 기록>\n\n<질문>\n{asked}\n</질문>")
        assert "연차" not in grade.looked_for and "카페" in grade.silent_on

    async def test_a_score_below_70_fails_and_names_what_is_missing(self, samples, scripted_llm, leave_hits):
        llm = scripted_llm(replies=[{"score": 65, "missing": ["3년 이상 근속자 가산휴가"], "relevant": [1]}])
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(
            LEAVE_QUESTION, leave_hits)
        assert not grade.passed
        assert grade.missing == ("3년 이상 근속자 가산휴가",)

    async def test_an_unavailable_llm_leaves_grading_to_the_offline_grader(self, samples, scripted_llm, leave_hits):
        llm = scripted_llm(replies=[LlmRequestFailed("overloaded", retryable=True)])
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(
            LEAVE_QUESTION, leave_hits)
        assert (grade.by, grade.passed) == ("offline", True)

    async def test_no_hits_fail_without_a_call(self, samples, scripted_llm):
        llm = scripted_llm()
        grade = await LlmGrader(llm, fallback=OfflineGrader(samples.corpus, samples.tokenizer)).run(
            LEAVE_QUESTION, [])
        assert not grade.passed and llm.requests == []


class TestLlmQueryRewriter:
    async def test_asks_for_one_query_about_the_missing_aspects(self, samples, scripted_llm):
        llm = scripted_llm(replies=[{"query": "연차유급휴가 3년 이상 근속 가산휴가"}])
        query = await LlmQueryRewriter(llm, fallback=OfflineQueryRewriter(samples.retriever.analyzer)).run(
            "3년 넘게 다니면 연차 더 줘?", ("근속연수에 따른 가산휴가",))
        assert query == "연차유급휴가 3년 이상 근속 가산휴가"
        assert "- 근속연수에 따른 가산휴가" in llm.requests[0].messages[0].content

    async def test_falls_back_to_missing_words_and_synonyms(self, samples, scripted_llm):
        llm = scripted_llm(replies=[{"query": "   "}])
        query = await LlmQueryRewriter(llm, fallback=OfflineQueryRewriter(samples.retriever.analyzer)).run(
            "야근하면 돈 더 줘?", ("수당",))
        assert query.startswith("수당 ")
        assert "연장근로" in query  # the synonym table's word for 야근


class TestOfflineGrader:
    async def test_passes_evidence_that_covers_the_question(self, samples, leave_hits):
        grade = await OfflineGrader(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer).run(
            LEAVE_QUESTION, leave_hits)
        assert grade.passed
        assert len(grade.relevant) == len(leave_hits)

    async def test_fails_a_question_whose_rare_words_the_regulations_never_use(self, samples):
        question = "사내 카페는 저녁 몇 시에 문을 닫아?"
        hits = samples.retriever.search_sync(question, k=4)
        grade = await OfflineGrader(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer).run(
            question, hits)
        assert not grade.passed
        assert "카페" in grade.missing
