"""The bundled samples through real Kiwi, Chroma and the offline pipeline (deterministic embedder)."""

import unicodedata

import pytest

from rag.models import AnswerEventKind, Message, Role, Route
from rag.pipeline import collect


def labels(hits):
    return [f"{h.chunk.doc} {h.chunk.article}" for h in hits]


@pytest.mark.parametrize("question", ["입사 1년 지나면 연차 며칠 받아?", "월차 같은 휴가는 몇 개 줘?"])
def test_colloquial_leave_question_finds_the_leave_article(sample_components, question):
    hits = sample_components.retriever.search_sync(question, k=5)
    assert "취업규칙 제20조" in labels(hits)


def test_colloquial_overtime_question_finds_overtime_article(sample_components):
    hits = sample_components.retriever.search_sync("야근하면 돈 더 줘?", k=5)
    assert "취업규칙 제12조" in labels(hits)


@pytest.mark.parametrize(("query", "doc", "target"), [
    ("취업규칙 제20조", "취업규칙", "제20조"),
    ("취업규칙 20조", "취업규칙", "제20조"),
    ("「취업규칙」 제12조의2", "취업규칙", "제12조의2"),
    ("여비 규정 별표 2", "여비 규정", "별표 2"),
    ("여비규정 제6조의2", "여비 규정", "제6조의2"),
])
def test_lookup_answers_references_exactly(sample_components, query, doc, target):
    result = sample_components.lookup.lookup(query)
    assert (result.kind, result.doc, result.target) in {("article", doc, target), ("annex", doc, target)}


def test_lookup_survives_nfd_input(sample_components):
    result = sample_components.lookup.lookup(unicodedata.normalize("NFD", "취업규칙 제20조"))
    assert result.target == "제20조"


def test_lookup_of_a_chapter_lists_its_articles(sample_components):
    result = sample_components.lookup.lookup("취업규칙 제4장")
    assert result.kind == "chapter"
    assert any("제20조 연차유급휴가" in line for line in result.outline)


def test_lookup_of_a_document_gives_an_overview(sample_components):
    result = sample_components.lookup.lookup("복무 규정")
    assert result.kind == "overview"
    assert any("제4조 겸직 금지" in line for line in result.outline)


def test_lookup_reports_a_missing_article(sample_components):
    assert sample_components.lookup.lookup("취업규칙 제99조").kind == "not_found"


def test_deleted_article_is_never_retrieved(sample_components):
    hits = sample_components.retriever.search_sync("취업규칙 삭제", k=20)
    assert "취업규칙 제7조" not in labels(hits)


async def test_pipeline_answers_a_lookup_with_the_article_text(sample_components):
    answer, _ = await collect(sample_components.pipeline, "취업규칙 제20조")
    assert answer.route == Route.LOOKUP
    assert "15일의 연차유급휴가" in answer.text
    assert answer.citations[0].label == "취업규칙 제20조"


async def test_pipeline_cites_the_paragraph_it_quotes(sample_components):
    answer, events = await collect(sample_components.pipeline, "입사 1년 지나면 연차 며칠 받아?")
    assert answer.route == Route.SEARCH
    assert "15일" in answer.text
    assert "취업규칙 제20조 제1항" in [c.label for c in answer.citations]
    kinds = [e.kind for e in events]
    assert kinds[0] == AnswerEventKind.STATUS and kinds[-1] == AnswerEventKind.DONE
    assert AnswerEventKind.DELTA in kinds and AnswerEventKind.SOURCES in kinds


async def test_pipeline_says_plainly_when_regulations_do_not_cover_it(sample_components):
    answer, _ = await collect(sample_components.pipeline, "사내 카페는 저녁 몇 시에 문을 닫아?")
    assert not answer.grounded
    assert "찾지 못했어요" in answer.text
    assert answer.citations == ()


async def test_pipeline_chitchat_does_not_retrieve(sample_components):
    answer, _ = await collect(sample_components.pipeline, "안녕! 만나서 반가워")
    assert answer.route == Route.CHITCHAT
    assert answer.retrieved == ()


async def test_followup_uses_the_conversation(sample_components):
    history = (Message(role=Role.USER, content="연차휴가는 며칠이야?"),
               Message(role=Role.ASSISTANT, content="1년간 80퍼센트 이상 출근하면 15일이에요."))
    answer, _ = await collect(sample_components.pipeline, "그럼 3년 넘게 일하면?", history=history)
    assert "취업규칙 제20조 제3항" in [c.label for c in answer.citations]
    assert "25일" in answer.text


def test_follow_up_searched_with_its_earlier_turn_finds_the_leave_article(sample_components):
    hits = sample_components.retriever.search_sync("그럼 3년 넘게 일하면?", k=3, context="연차휴가는 며칠이야?")
    assert labels(hits)[0] == "취업규칙 제20조"


def test_top_hits_are_distinct_articles(sample_components):
    found = labels(sample_components.retriever.search_sync("휴가", k=5))
    assert len(found) == len(set(found))


def test_neighbour_expansion_adds_the_article_a_hit_cites(sample_components):
    from rag.models import Hit
    from rag.retrieval.neighbours import NeighbourExpander

    corpus = sample_components.corpus
    leave_pay = next(c for c in corpus.chunks if c.doc == "취업규칙" and c.article == "제31조")
    expanded = NeighbourExpander(corpus).expand([Hit(chunk=leave_pay, score=1.0)])
    assert labels(expanded) == ["취업규칙 제31조", "취업규칙 제30조"]


def test_retriever_names_the_domain_of_a_question(sample_components):
    retriever = sample_components.retriever
    analyzed = retriever.analyzer.analyze("야근하면 수당 더 받아?")
    assert retriever.domains.run(analyzed, retriever.query_embedder.run(analyzed)).decision.domains == ("labor",)


def test_mirrored_vectors_rank_like_chroma(sample_components):
    from rag.models import Scope

    corpus = sample_components.corpus
    assert corpus.vectors is not None and corpus.has_vector.all()
    query = "출장 가면 숙박비는 얼마까지 나와?"
    vector = corpus.dense.embed_query(query)
    mirrored = [corpus.chunks[i].chunk_id for i, _ in corpus.dense_search(vector, 3, corpus.mask(Scope()))]
    from_chroma = [cid for cid, _ in corpus.dense.search(query, 10) if not corpus.get(cid).deleted][:3]
    assert mirrored == from_chroma
