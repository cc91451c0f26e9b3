from __future__ import annotations

import numpy as np
import pytest
from retrieval_samples import index_chunks, make_chunk

from rag.errors import RetrievalUnavailable
from rag.lang.asks import QuestionFacets
from rag.models import Hit, Scope
from rag.retrieval.components import Candidate
from rag.retrieval.links import SanctionLinks
from rag.retrieval.neighbours import NeighbourExpander
from rag.retrieval.query import AnalyzedQuery, QueryAnalyzer
from rag.retrieval.retriever import HybridRetriever, RetrievalConfig, distinct_articles_first


def labels(hits):
    return [f"{h.chunk.doc} {h.chunk.article}" for h in hits]


@pytest.fixture
def retriever(rules_corpus, kiwi_tokenizer):
    return HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer))


def test_colloquial_overtime_question_finds_the_overtime_pay_article(retriever):
    assert labels(retriever.search_sync("야근하면 돈 더 줘?", k=3))[0] == "근로기준법 제56조"


def test_closed_factory_question_finds_shutdown_allowance(retriever):
    assert labels(retriever.search_sync("회사 사정으로 공장이 문을 닫으면 월급은?", k=3))[0] == "근로기준법 제46조"


def test_civil_servant_question_stays_in_civil_service_rules(retriever):
    found = labels(retriever.search_sync("공무원인데 주말에 쇼핑몰 해서 돈 벌어도 돼?", k=3))
    assert found[0] == "국가공무원 복무규정 제25조"


def test_follow_up_finds_its_subject_through_the_earlier_turn(retriever):
    without = labels(retriever.search_sync("6년 넘게 일하면?", k=3))
    with_context = labels(retriever.search_sync("6년 넘게 일하면?", k=3, context="공무원 연가는 며칠이야?"))
    assert with_context[0] == "국가공무원 복무규정 제15조"
    assert without != with_context


def test_a_long_articles_parts_do_not_crowd_out_other_articles(retriever):
    found = labels(retriever.search_sync("연차 휴가 근로자", k=4))
    assert len(set(found[:3])) == 3
    assert found[0] == "근로기준법 제60조"


def test_named_regulation_is_preferred(retriever):
    found = labels(retriever.search_sync("근로기준법 시행령 휴업수당", k=2))
    assert found[0] == "근로기준법 시행령 제26조"


def test_repealed_and_deleted_text_is_not_retrieved_unless_asked(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [
        make_chunk("옛 여비 규정", "제3조", "출장비", "출장비는 실비로 지급한다.", status="폐지"),
        make_chunk("여비 규정", "제3조", "출장비", "출장비는 정액으로 지급한다."),
        make_chunk("여비 규정", "제4조", "", "삭제", deleted=True),
    ])
    retriever = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer))
    assert labels(retriever.search_sync("출장비 지급", k=5)) == ["여비 규정 제3조"]
    assert "옛 여비 규정 제3조" in labels(retriever.search_sync("폐지된 출장비 규정", k=5))


def test_identical_text_is_returned_once(tmp_path, kiwi_tokenizer):
    same = "출장비는 실비로 지급한다."
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [
        make_chunk("여비 규정", "제3조", "출장비", same, collection="a"),
        make_chunk("여비 규정", "제3조", "출장비", same, collection="b"),
    ])
    hits = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer)).search_sync("출장비", k=5)
    assert len(hits) == 1


def test_scope_limits_collections_and_audience(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [
        make_chunk("교원 복무", "제1조", "겸직",
                   "교원은 허가를 받아 겸직할 수 있다.", collection="faculty", audience="faculty"),
        make_chunk("직원 복무", "제1조", "겸직",
                   "직원은 허가를 받아 겸직할 수 있다.", collection="staff", audience="staff"),
    ])
    retriever = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer))
    assert labels(retriever.search_sync("겸직", k=5, scope=Scope(collections=("staff",)))) == ["직원 복무 제1조"]
    assert labels(retriever.search_sync("겸직", k=5, scope=Scope(audience="faculty"))) == ["교원 복무 제1조"]


def test_effective_date_filter_hides_text_not_yet_in_force(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [
        make_chunk("여비 규정", "제3조", "출장비",
                   "출장비는 정액으로 지급한다.", effective_date="2030-01-01"),
        make_chunk("출장 지침", "제2조", "출장비",
                   "출장비는 실비로 지급한다.", effective_date="2024-01-01"),
    ])
    retriever = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer),
                                config=RetrievalConfig(effective_on="2026-01-01"))
    assert labels(retriever.search_sync("출장비", k=5)) == ["출장 지침 제2조"]


def test_hard_domain_mode_drops_other_domains(retriever, rules_corpus, kiwi_tokenizer):
    hard = HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer), config=RetrievalConfig(domain_mode="hard"))
    found = labels(hard.search_sync("공무원 휴가 일수", k=10))
    assert found and all(label.startswith("국가공무원") for label in found)


def test_empty_index_says_to_ingest(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [])
    with pytest.raises(RetrievalUnavailable, match="ingest"):
        HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer)).search_sync("연차")


async def test_search_many_runs_each_planned_query(retriever):
    per_query = await retriever.search_many(["야근 수당", "공무원 연가 일수"], k=1)
    assert [labels(h) for h in per_query] == [["근로기준법 제56조"], ["국가공무원 복무규정 제15조"]]


def test_classify_names_the_domain(retriever):
    def domains(question):
        return retriever.domains.run(retriever.analyzer.analyze(question), None).decision.domains

    assert domains("공무원인데 겸직 돼?") == ("civil_service",)
    assert domains("근로기준법 제56조 가산임금") == ("labor",)


def test_distinct_articles_first_keeps_order_and_moves_second_parts_back():
    first = make_chunk("규정", "제1조", "가", "하나", part=0)
    second = make_chunk("규정", "제1조", "가", "둘", part=1)
    other = make_chunk("규정", "제2조", "나", "셋")
    from rag.models import Hit

    hits = [Hit(chunk=c, score=s) for c, s in ((first, 3.0), (second, 2.0), (other, 1.0))]
    assert [h.chunk.chunk_id for h in distinct_articles_first(hits)] == [first.chunk_id, other.chunk_id,
                                                                         second.chunk_id]


def test_a_question_spanning_two_domains_keeps_a_slot_for_each(rules_corpus, kiwi_tokenizer):
    question = "회사 근로자 휴업수당 평균임금이랑 공무원 겸직"
    budget = HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer))
    no_budget = HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer),
                                config=RetrievalConfig(min_hits_per_domain=0))
    assert labels(no_budget.search_sync(question, k=2)) == ["근로기준법 제46조", "근로기준법 시행령 제26조"]
    assert labels(budget.search_sync(question, k=2)) == ["근로기준법 제46조", "국가공무원 복무규정 제26조"]


def test_the_dense_model_reads_a_follow_up_with_only_the_start_of_its_context(rules_corpus, kiwi_tokenizer):
    from rag.retrieval.components import QueryEmbedder

    analyzer = QueryAnalyzer(kiwi_tokenizer)
    earlier = "공무원 연가는 며칠이야? 재직기간에 따라 다르며 6년 이상이면 21일입니다. 자세한 표는 제15조를 보세요."
    analyzed = analyzer.analyze("그럼 5년이면?", context=earlier)
    short = QueryEmbedder(rules_corpus, RetrievalConfig(dense_context_chars=13)).text(analyzed)
    whole = QueryEmbedder(rules_corpus, RetrievalConfig(dense_context_chars=None)).text(analyzed)
    assert short == "공무원 연가는 며칠이야? 그럼 5년이면?"
    assert whole.startswith(earlier) and whole.endswith("그럼 5년이면?")


@pytest.fixture
def leave_rules(tmp_path, kiwi_tokenizer):
    return index_chunks(tmp_path, kiwi_tokenizer, [
        make_chunk("근무 규칙", "제1조", "목적",
                   "이 규칙은 직원의 근무 조건과 복지에 관한 사항을 정함을 목적으로 한다."),
        make_chunk("근무 규칙", "제12조", "육아휴직",
                   "① 회사는 자녀를 양육하려는 직원에게 육아휴직을 허용하여야 한다.\n"
                   "② 회사는 육아휴직을 이유로 해고나 그 밖의 불리한 처우를 하여서는 아니 된다."),
        make_chunk("근무 규칙", "제13조", "육아휴직 후 복귀",
                   "회사는 육아휴직을 마친 직원을 같은 업무에 복귀시켜야 한다."),
        make_chunk("근무 규칙", "제30조", "벌칙",
                   "다음 각 호의 어느 하나에 해당하는 자는 2년 이하의 징역 또는 2천만원 이하의 벌금에 처한다.\n"
                   "1. 제5조를 위반하여 임금을 지급하지 아니한 자\n2. 제12조제2항을 위반하여 불리한 처우를 한 자"),
        make_chunk("근무 규칙", "제31조", "양벌규정",
                   "법인의 종업원이 제30조의 위반행위를 하면 법인에도 벌금형을 과한다."),
    ])


@pytest.mark.parametrize(("question", "first"), [
    # The sanction article shares almost no words with the question: it moves in ahead of the rule it cites.
    ("육아휴직 썼다고 불이익 주면 회사는 어떤 처벌 받아?", "근무 규칙 제30조"),
    ("육아휴직 썼다고 불이익 줘도 돼?", "근무 규칙 제12조"),  # no sanction asked for: the rule itself
])
def test_a_question_about_a_sanction_finds_the_article_that_punishes_the_rule(leave_rules, kiwi_tokenizer,
                                                                             question, first):
    hits = HybridRetriever(leave_rules, QueryAnalyzer(kiwi_tokenizer)).search_sync(question, k=3)
    assert labels(hits)[0] == first
    assert "근무 규칙 제31조" not in labels(hits)[:1]  # 양벌규정 is about sanctions, it states none


def test_sanction_links_can_be_turned_off(leave_rules, kiwi_tokenizer):
    retriever = HybridRetriever(leave_rules, QueryAnalyzer(kiwi_tokenizer),
                                config=RetrievalConfig(sanction_sources=0))
    assert labels(retriever.search_sync("육아휴직 썼다고 불이익 주면 회사는 어떤 처벌 받아?", k=3))[0] == \
        "근무 규칙 제12조"


def test_a_sanction_the_search_ranked_second_answers_first(leave_rules):
    by_article = {c.article: c for c in leave_rules.chunks}
    hits = [Hit(chunk=by_article[a], score=1.0 - 0.1 * i) for i, a in enumerate(["제12조", "제30조", "제13조"])]
    links = SanctionLinks(leave_rules, NeighbourExpander(leave_rules), RetrievalConfig())
    asked = AnalyzedQuery(text="불리한 처우를 하면 처벌은?", tokens=("불리", "처우", "처벌"),
                          facets=QuestionFacets(sanction=True))
    mask = np.ones(len(leave_rules.chunks), dtype=bool)
    assert labels(links.run(asked, hits, mask)) == ["근무 규칙 제30조", "근무 규칙 제12조", "근무 규칙 제13조"]
    not_asked = AnalyzedQuery(text="불리한 처우를 해도 돼?", tokens=("불리", "처우"))
    assert labels(links.run(not_asked, hits, mask)) == ["근무 규칙 제12조", "근무 규칙 제30조", "근무 규칙 제13조"]


@pytest.mark.parametrize(("question", "first"), [
    # What a regulation is for is its 목적 article, which shares almost no words with the question.
    ("근무 규칙은 대체 뭘 정하려고 만든 거야?", "근무 규칙 제1조"),
    ("육아휴직 제도는 왜 있는 거야? 목적이 뭐야?", "근무 규칙 제1조"),
    ("그럼 그 규칙은 애초에 뭘 목적으로 만든 거예요?", "근무 규칙 제1조"),
    ("육아휴직을 신청 목적 외로 써도 돼?", "근무 규칙 제12조"),  # a purpose in the question, not the rules'
    ("육아휴직은 어떤 목적으로 만든 휴직이야?", "근무 규칙 제12조"),  # what a thing it sets up is for: its article
])
def test_a_question_about_what_a_regulation_is_for_finds_its_purpose_article(leave_rules, kiwi_tokenizer, question,
                                                                           first):
    hits = HybridRetriever(leave_rules, QueryAnalyzer(kiwi_tokenizer)).search_sync(question, k=3)
    assert labels(hits)[0] == first


def test_a_subordinate_regulation_weighs_by_its_own_factor_unless_the_question_names_it(tmp_path, kiwi_tokenizer):
    law = make_chunk("임금 규정", "제5조", "임금 지급일", "임금은 매월 25일에 지급한다.")
    decree = make_chunk("임금 규정 시행세칙", "제3조", "임금 지급일", "지급일이 휴일이면 전날 지급한다.")
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [law, decree, make_chunk("복무 규정", "제1조", "출근", "9시 출근")])
    assert corpus.subordinate == {"임금 규정 시행세칙"}
    retriever = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer), config=RetrievalConfig(subordinate_factor=0.5))

    def weighted(question: str) -> dict[str, float]:
        analyzed = retriever.analyzer.analyze(question)
        found = retriever.priors.run([Candidate(law.chunk_id, 1.0, {}), Candidate(decree.chunk_id, 1.0, {})],
                                     retriever.domains.run(analyzed, None))
        return {corpus.get(c.chunk_id).doc: c.score for c in found}

    assert weighted("임금 지급일은 언제야?") == {"임금 규정": 1.0, "임금 규정 시행세칙": 0.5}
    named = weighted("임금 규정 시행세칙에서 지급일은?")
    assert named["임금 규정 시행세칙"] > named["임금 규정"]  # named: boosted, never the subordinate factor


def test_a_reply_cites_the_articles_named_after_a_regulation_not_the_numbers_inside_its_quotes(retriever):
    reply = ('근로기준법 제60조 제1항에 따르면 "사용자는 제17조에 따른 근로계약에 따라 15일의 휴가를 주어야 한다." [1] '
             "근거 조문: [1] 근로기준법 제60조 및 제61조 [2] 근로기준법 시행령 제26조")
    assert retriever.domains.cited_articles(reply) == {
        ("근로기준법", "제60조"), ("근로기준법", "제61조"), ("근로기준법 시행령", "제26조")}


LEAVE_EXCHANGE = ("입사 1년 지나면 연차 며칠 받아? 근로기준법 제60조 제1항에 따르면 사용자는 1년간 80퍼센트 이상 "
                  "출근한 근로자에게 15일의 유급휴가를 주어야 합니다.")


@pytest.mark.parametrize(("question", "asked_about"), [
    ("그럼 야근하면 돈 더 줘?", "근로기준법 제56조"),
    ("그럼 회사 사정으로 쉬면 월급은?", "근로기준법 제46조"),
])
def test_a_follow_up_that_moved_on_finds_its_own_article_before_the_one_just_quoted(
        rules_corpus, kiwi_tokenizer, question, asked_about):
    def first(factor: float) -> str:
        config = RetrievalConfig(cited_focus_factor=factor)
        retriever = HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer), config=config)
        return labels(retriever.search_sync(question, k=3, context=LEAVE_EXCHANGE))[0]

    assert first(RetrievalConfig().cited_focus_factor) == asked_about
    assert first(1.0) == "근로기준법 제60조"  # without the focus, the article the reply quoted comes back first


@pytest.mark.parametrize("question", ["그럼 그 휴가를 다 못 쓰면 돈으로 받아?", "그럼 3년 일하면?"])
def test_a_follow_up_on_the_same_matter_has_not_moved_on_from_the_article_just_quoted(
        rules_corpus, kiwi_tokenizer, question):
    # However hard the focus demotes, the question's own words still score the quoted article near their best.
    config = RetrievalConfig(cited_focus_factor=0.1)
    retriever = HybridRetriever(rules_corpus, QueryAnalyzer(kiwi_tokenizer), config=config)
    assert labels(retriever.search_sync(question, k=3, context=LEAVE_EXCHANGE))[0] == "근로기준법 제60조"
