"""Eval metrics (DESIGN.md §3 "Eval file format" and "Eval figures") on small handmade items."""

import pytest

from rag.eval import EvalItem, Evaluator, keyword_coverage, summarise
from rag.models import Answer, AnswerEvent, Chunk, Citation, Hit, Message, Outcome, Role, Route


def row(type_="colloquial", *, gold=True, refused=False, hedged=False, coverage=None, lead=None, hit1=False,
        chat_empty=False):
    return {"type": type_, "has_gold": gold, "hit1": hit1, "hit5": hit1, "mrr": 1.0 if hit1 else 0.0,
            "all_gold": None, "coverage": coverage, "lead_coverage": lead, "refused": refused, "hedged": hedged,
            "retrieved_nothing": chat_empty, "llm_calls": 0}


class TestKeywordCoverage:
    def test_alternatives_and_spaces(self):
        text = "서면합의가 필요하고 100분의 70을 줘요"
        assert keyword_coverage(text, ["서면 합의", "70%|100분의 70", "3년"]) == 2 / 3

    def test_no_keywords_is_not_a_zero(self):
        assert keyword_coverage("아무 답", []) is None


class TestSummarise:
    def test_refusal_is_counted_on_out_of_scope_and_false_refusal_on_answerable_items(self):
        rows = [row("out_of_scope", gold=False, refused=True), row("out_of_scope", gold=False),
                row(refused=True), row(), row(), row("chitchat", gold=False, refused=False, chat_empty=True)]
        metrics = summarise(rows)
        assert metrics["refusal_rate_out_of_scope"] == 0.5
        assert metrics["false_refusal_rate_answerable"] == pytest.approx(1 / 3, abs=1e-4)
        assert metrics["no_retrieval_rate_chitchat"] == 1.0

    def test_a_hedge_is_not_a_refusal_and_has_its_own_rates(self):
        rows = [row(hedged=True), row(refused=True), row(), row(),
                row("out_of_scope", gold=False, hedged=True), row("out_of_scope", gold=False, refused=True)]
        metrics = summarise(rows)
        assert (metrics["false_refusal_rate_answerable"], metrics["hedged_rate_answerable"]) == (0.25, 0.25)
        assert (metrics["refusal_rate_out_of_scope"], metrics["hedged_rate_out_of_scope"]) == (0.5, 0.5)

    def test_keywords_in_the_first_200_characters_average_over_answerable_items(self):
        metrics = summarise([row(coverage=1.0, lead=0.5), row(coverage=1.0, lead=1.0), row("out_of_scope", gold=False)])
        assert (metrics["keyword_coverage"], metrics["keyword_coverage_first_200"]) == (1.0, 0.75)

    def test_a_figure_without_items_is_none(self):
        metrics = summarise([row()])
        assert metrics["refusal_rate_out_of_scope"] is None and metrics["no_retrieval_rate_chitchat"] is None


class ScriptedPipeline:
    """Answers each question with a scripted Answer, as `AnswerPipeline.run` would stream it."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers

    async def run(self, turn):
        answer = self.answers[turn.text]
        yield AnswerEvent.delta(answer.text)
        yield AnswerEvent.done(answer)


def item(id_, type_, question, *, gold=(), keywords=()):
    return EvalItem(id=id_, type=type_, turns=[Message(role=Role.USER, content=question)],
                    gold=[{"doc": d, "article": a} for d, a in gold], answer_keywords=list(keywords))


async def test_the_json_result_keeps_the_design_shape_and_adds_the_new_figures():
    chunk = Chunk(chunk_id="c1", doc="근로기준법", article="제60조", chapter="제4장", text="제60조 15일")
    late = "관련 규정은 다음과 같아요. " + "가" * 200 + " 15일"
    answers = {
        "연차 며칠?": Answer(text=late, route=Route.SEARCH, retrieved=(Hit(chunk=chunk, score=1.0),),
                          citations=(Citation(index=1, doc="근로기준법", article="제60조", quote="15일"),)),
        "사내 카페?": Answer(text="찾지 못했어요", route=Route.SEARCH, grounded=False),
        "안녕": Answer(text="안녕하세요", route=Route.CHITCHAT),
        "퇴직금 언제?": Answer(text="가장 가까운 조문은 …", route=Route.SEARCH, outcome=Outcome.HEDGED,
                           retrieved=(Hit(chunk=chunk, score=1.0),)),
    }
    items = [item("a", "colloquial", "연차 며칠?", gold=[("근로기준법", "제60조")], keywords=["15일"]),
             item("o", "out_of_scope", "사내 카페?"), item("c", "chitchat", "안녕"),
             item("h", "colloquial", "퇴직금 언제?", gold=[("근로기준법", "제60조")])]
    result = await Evaluator(ScriptedPipeline(answers)).run(items)
    assert set(result) == {"metrics", "by_type", "items"}
    metrics = result["metrics"]
    assert {"hit@1", "hit@5", "mrr@10", "keyword_coverage", "refusal_rate_out_of_scope",
            "no_retrieval_rate_chitchat"} <= set(metrics)
    assert (metrics["hit@1"], metrics["keyword_coverage"], metrics["keyword_coverage_first_200"]) == (1.0, 1.0, 0.0)
    assert (metrics["refusal_rate_out_of_scope"], metrics["false_refusal_rate_answerable"]) == (1.0, 0.0)
    assert metrics["hedged_rate_answerable"] == 0.5
    assert set(result["by_type"]) == {"colloquial", "out_of_scope", "chitchat"}
    first = result["items"][0]
    assert {"id", "type", "route", "retrieved", "answer", "citations"} <= set(first)
    assert first["retrieved"] == [{"doc": "근로기준법", "article": "제60조", "chapter": "제4장"}]
    assert first["citations"] == [{"doc": "근로기준법", "article": "제60조", "title": "", "quote": "15일", "url": ""}]
    assert [i["refused"] for i in result["items"]] == [False, True, False, False]
    assert [i["outcome"] for i in result["items"]] == ["answered", "refused", "small_talk", "hedged"]


async def test_the_answers_language_is_scored_for_english_and_vietnamese_questions_with_a_gold_or_out_of_scope():
    chunk = Chunk(chunk_id="c1", doc="근로기준법", article="제60조", chapter="제4장", text="제60조 15일")
    hit = (Hit(chunk=chunk, score=1.0),)
    english = ("Here is what the Korean regulations say about annual paid leave. The article is quoted in Korean: "
               "근로기준법 제60조 「사용자는 15일의 유급휴가를 주어야 한다.」")
    answers = {
        "How many days of annual leave do I get?": Answer(text=english, route=Route.SEARCH, retrieved=hit),
        "Tôi được bao nhiêu ngày phép năm?": Answer(text="관련 규정은 다음과 같아요. 근로기준법 제60조 15일",
                                                     route=Route.SEARCH, retrieved=hit),
        "Which bank is best for a foreigner?": Answer(text="I could not find this in the regulations.",
                                                      route=Route.SEARCH, grounded=False),
        "Hi!": Answer(text="안녕하세요", route=Route.CHITCHAT),
        "연차 며칠?": Answer(text="관련 규정은 다음과 같아요.", route=Route.SEARCH, retrieved=hit),
    }
    items = [item("e", "colloquial", "How many days of annual leave do I get?", gold=[("근로기준법", "제60조")]),
             item("v", "colloquial", "Tôi được bao nhiêu ngày phép năm?", gold=[("근로기준법", "제60조")]),
             item("o", "out_of_scope", "Which bank is best for a foreigner?"),
             item("c", "chitchat", "Hi!"),  # small talk: neither a gold nor out of scope, not counted
             item("k", "colloquial", "연차 며칠?", gold=[("근로기준법", "제60조")])]  # Korean: not counted
    metrics = (await Evaluator(ScriptedPipeline(answers)).run(items))["metrics"]
    assert metrics["answer_language_first_200"] == pytest.approx(2 / 3, abs=1e-4)


def test_a_korean_set_has_no_answer_language_figure():
    assert summarise([row(), row("out_of_scope", gold=False)])["answer_language_first_200"] is None
