from __future__ import annotations

import pytest
from retrieval_samples import make_chunk

from rag.errors import ConfigError
from rag.lang.asks import QuestionReader
from rag.llm import LlmRequestFailed, LlmResponse
from rag.models import Hit
from rag.retrieval.query import AnalyzedQuery
from rag.retrieval.rerank import CrossEncoderReranker, HeuristicReranker, LlmListwiseReranker, reorder


def query(*tokens: str, expansion: tuple[str, ...] = ()) -> AnalyzedQuery:
    return AnalyzedQuery(text=" ".join(tokens), tokens=tokens, expansion=expansion)


def hits(*chunks, scores=None):
    scores = scores or [1.0] * len(chunks)
    return [Hit(chunk=c, score=s) for c, s in zip(chunks, scores, strict=True)]


def titles(ranked):
    return [h.chunk.title for h in ranked]


def test_title_that_covers_the_question_moves_up():
    body_only = make_chunk("규정", "제1조", "임금 지급", "휴업 기간에도 임금을 지급한다.")
    titled = make_chunk("규정", "제2조", "휴업수당", "평균임금의 100분의 70 이상을 준다.")
    ranked = HeuristicReranker().rerank(query("휴업수당"), hits(body_only, titled, scores=[1.0, 0.95]))
    assert titles(ranked) == ["휴업수당", "임금 지급"]


def test_rare_words_decide_over_common_ones():
    common = make_chunk("규정", "제1조", "근로자", "근로자 근로자 근로자")
    rare = make_chunk("규정", "제2조", "위약금", "위약금을 정하지 못한다.")
    idf = {"근로자": 0.1, "위약금": 5.0}.get
    ranked = HeuristicReranker(idf=lambda t: idf(t, 1.0)).rerank(query("근로자", "위약금"), hits(common, rare))
    assert titles(ranked)[0] == "위약금"


def test_the_question_words_in_one_paragraph_outrank_the_same_words_scattered():
    scattered = make_chunk("규정", "제1조", "출장", "① 출장 신청은 부서장에게 한다.\n② 정산은 재무팀이 한다.\n"
                                                   "③ 숙박은 회사가 정한 곳에서 한다.")
    together = make_chunk("규정", "제2조", "출장", "① 출장 중 숙박은 1박에 8만원까지 정산한다.\n② 영수증을 붙인다.")
    question = query("출장", "숙박", "정산")
    ranked = HeuristicReranker().rerank(question, hits(scattered, together))
    assert ranked[0].chunk.article == "제2조"
    flat = HeuristicReranker(paragraph_weight=0.0).rerank(question, hits(scattered, together))
    assert flat[0].chunk.article == "제1조"  # the fused order stands without the paragraph signal


def test_an_article_stating_the_unit_asked_for_moves_up():
    days = make_chunk("학칙", "제9조", "수업", "수업은 학기마다 15일 이상 연다.")
    weeks = make_chunk("학칙", "제10조", "수업", "수업은 매 학년도 30주 이상으로 한다.")
    reader = QuestionReader()
    text = "대학은 1년에 최소 몇 주는 수업해야 해?"
    question = AnalyzedQuery(text=text, tokens=("대학", "최소", "수업"), facets=reader.read(text))
    ranked = HeuristicReranker().rerank(question, hits(days, weeks))
    assert ranked[0].chunk.article == "제10조"
    other_unit = AnalyzedQuery(text="수업은 며칠 해?", tokens=("수업",), facets=reader.read("수업은 며칠 해?"))
    assert HeuristicReranker().rerank(other_unit, hits(days, weeks))[0].chunk.article == "제9조"
    unweighted = HeuristicReranker(quantity_weight=0.0).rerank(question, hits(days, weeks))
    assert unweighted[0].chunk.article == "제9조"  # the fused order stands without the unit signal


def test_a_question_whether_something_counts_as_a_term_favours_the_article_defining_it():
    allowance = make_chunk("규정", "제20조", "가족수당", "가족수당은 배우자에게 매월 4만원을 지급한다.")
    definitions = make_chunk("규정", "제2조", "정의", "① 이 규정에서 사용하는 용어의 뜻은 다음과 같다.\n"
                                                  '1. "임금"이란 근로의 대가로 지급하는 모든 금품을 말한다.')
    text = "가족수당이 임금에 해당하는지 궁금합니다"
    question = AnalyzedQuery(text=text, tokens=("가족수당", "임금"), facets=QuestionReader().read(text))
    assert question.facets.classified == ("임금",)
    ranked = HeuristicReranker(defines_weight=0.8).rerank(question, hits(allowance, definitions))
    assert ranked[0].chunk.article == "제2조"
    plain = AnalyzedQuery(text="가족수당은 얼마야?", tokens=("가족수당", "임금"),
                          facets=QuestionReader().read("가족수당은 얼마야?"))
    not_asked = HeuristicReranker(defines_weight=0.8).rerank(plain, hits(allowance, definitions))
    assert not_asked[0].chunk.article == "제20조"
    unweighted = HeuristicReranker(defines_weight=0.0).rerank(question, hits(allowance, definitions))
    assert unweighted[0].chunk.article == "제20조"  # the fused order stands without the definition signal


def test_addenda_are_demoted():
    addenda = make_chunk("규정", "부칙", "부칙", "이 규정은 공포한 날부터 휴가에 관하여 시행한다.", kind="addenda")
    article = make_chunk("규정", "제3조", "휴가", "휴가는 15일로 한다.")
    ranked = HeuristicReranker().rerank(query("휴가"), hits(addenda, article, scores=[1.0, 0.9]))
    assert titles(ranked)[0] == "휴가"


def test_cross_encoder_without_weights_says_what_to_configure(tmp_path):
    with pytest.raises(ConfigError, match="model weights"):
        CrossEncoderReranker(tmp_path / "missing-model")


def test_cross_encoder_orders_by_model_scores(tmp_path):
    class PairScorer:
        def predict(self, pairs):
            return [1.0 if "휴업" in passage else 0.0 for _, passage in pairs]

    (tmp_path / "model").mkdir()
    reranker = CrossEncoderReranker(tmp_path / "model", loader=lambda path: PairScorer())
    a = make_chunk("규정", "제1조", "임금", "임금을 준다.")
    b = make_chunk("규정", "제2조", "휴업수당", "휴업하면 수당을 준다.")
    assert titles(reranker.rerank(query("휴업"), hits(a, b))) == ["휴업수당", "임금"]


class FakeLlm:
    name = "fake"

    def __init__(self, order=None, error=None):
        self.order = order
        self.error = error
        self.requests = []

    @property
    def available(self):
        return True

    async def complete(self, request):
        self.requests.append(request)
        if self.error:
            raise self.error
        return LlmResponse(data={"order": self.order})

    def stream(self, request):
        raise NotImplementedError


async def test_llm_listwise_order_is_applied():
    a, b, c = (make_chunk("규정", f"제{i}조", t, f"{t} 본문") for i, t in enumerate(["가", "나", "다"], 1))
    llm = FakeLlm(order=[3, 1])
    ranked = await LlmListwiseReranker(llm, fallback=HeuristicReranker()).arerank(query("질문"), hits(a, b, c))
    assert titles(ranked) == ["다", "가", "나"]
    assert "질문: 질문" in llm.requests[0].messages[0].content


async def test_llm_listwise_failure_keeps_the_fallback_order():
    a, b = make_chunk("규정", "제1조", "가", "휴가"), make_chunk("규정", "제2조", "나", "다른 것")
    llm = FakeLlm(error=LlmRequestFailed("down", retryable=True))
    ranked = await LlmListwiseReranker(llm, fallback=HeuristicReranker()).arerank(query("휴가"), hits(a, b))
    assert titles(ranked) == ["가", "나"]


def test_reorder_ignores_unknown_and_repeated_positions():
    chunks = [make_chunk("규정", f"제{i}조", str(i), "본문") for i in range(3)]
    ranked = reorder(hits(*chunks), [2, 2, 9, -1])
    assert titles(ranked) == ["2", "0", "1"]
    assert ranked[0].score > ranked[1].score > ranked[2].score
