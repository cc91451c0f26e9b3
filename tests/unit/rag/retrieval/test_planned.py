from rag.models import Chunk, Hit
from rag.retrieval.planned import (
    EvidenceSelector,
    PlannedQuery,
    PlannedRetrieval,
    RetrievalRequest,
    merge_hits,
    planned_queries,
)


def hit(doc: str, article: str, part: int = 0) -> Hit:
    chunk = Chunk(chunk_id=f"{doc}{article}{part}", doc=doc, article=article, text=f"{doc} {article}", part=part)
    return Hit(chunk=chunk, score=1.0)


def labels(hits):
    return [f"{h.chunk.doc} {h.chunk.article}" for h in hits]


class RankingsByQuery:
    """A retriever that answers each query with a fixed ranking and records what it was asked."""

    def __init__(self, rankings: dict[str, list[Hit]]) -> None:
        self.rankings = rankings
        self.asked: list[tuple[str, int, str]] = []

    async def search(self, query, *, k=10, scope=None, context=""):
        self.asked.append((query, k, context))
        return self.rankings.get(query, [])[:k]

    async def search_many(self, queries, *, k=10, scope=None, context=""):
        return [await self.search(q, k=k, scope=scope, context=context) for q in queries]

    def get(self, chunk_id):
        return None


def test_merged_queries_alternate_and_skip_repeated_articles():
    whole = [hit("법", "제17조"), hit("법", "제42조"), hit("법", "제27조")]
    first_part = [hit("법", "제17조", part=1), hit("법", "제67조")]
    second_part = [hit("법", "제42조"), hit("시행령", "제22조")]
    merged = merge_hits([whole, first_part, second_part], 10)
    assert labels(merged) == ["법 제17조", "법 제42조", "법 제67조", "시행령 제22조", "법 제27조", "법 제17조"]
    assert len(merge_hits([whole, first_part, second_part], 3)) == 3


def test_planned_queries_type_the_whole_question_and_each_part():
    queries = planned_queries(("A와 B", "A", "B"), ("A?", "B?"))
    assert queries == (PlannedQuery(text="A와 B"), PlannedQuery(text="A", part=0), PlannedQuery(text="B", part=1))
    assert planned_queries(("A", "A 다른 말"), ()) == (PlannedQuery(text="A"), PlannedQuery(text="A 다른 말"))


async def test_each_part_keeps_its_best_hit_when_the_whole_question_fills_the_budget():
    crowd = [hit("법", f"제{n}조") for n in range(1, 10)]
    retriever = RankingsByQuery({"전체": crowd, "세금": [hit("세법", "제5조")], "절차": [hit("법", "제27조")]})
    result = await PlannedRetrieval(retriever, per_query_k=6, max_total_hits=4).run(RetrievalRequest(
        queries=planned_queries(("전체", "세금", "절차"), ("세금?", "절차?")), parts=("세금?", "절차?")))
    assert labels(result.hits)[:3] == ["법 제1조", "세법 제5조", "법 제27조"]
    assert {k for _, k, _ in retriever.asked} == {6}


async def test_a_follow_ups_context_reaches_every_search():
    retriever = RankingsByQuery({"그 금액은?": [hit("법", "제33조")]})
    await PlannedRetrieval(retriever).run(RetrievalRequest(queries=(PlannedQuery(text="그 금액은?"),),
                                                           context="이행강제금"))
    assert retriever.asked == [("그 금액은?", 6, "이행강제금")]


async def test_evidence_is_chosen_per_part_by_type_not_position():
    retriever = RankingsByQuery({"전체": [hit("법", "제1조")], "세금": [hit("세법", "제5조"), hit("세법", "제6조")],
                                 "절차": []})
    result = await PlannedRetrieval(retriever).run(RetrievalRequest(
        queries=planned_queries(("전체", "세금", "절차"), ("세금?", "절차?")), parts=("세금?", "절차?")))
    evidence = EvidenceSelector().run(result, relevant={"세법제6조0"})
    assert [g.question for g in evidence.groups] == ["세금?", "절차?"]
    assert labels(evidence.groups[0].hits) == ["세법 제6조"]  # what the grader found relevant
    assert labels(evidence.groups[1].hits) == ["세법 제6조"]  # nothing of its own: the relevant merged hits


async def test_evidence_gains_the_article_a_hit_cites_and_its_other_part(rules_corpus):
    from rag.retrieval.neighbours import NeighbourExpander

    dismissal = next(c for c in rules_corpus.chunks if c.article == "제23조")
    retriever = RankingsByQuery({"해고": [Hit(chunk=dismissal, score=1.0)]})
    result = await PlannedRetrieval(retriever).run(RetrievalRequest(queries=(PlannedQuery(text="해고"),)))
    evidence = EvidenceSelector(NeighbourExpander(rules_corpus, aliases={}), max_neighbours=2).run(result, set())
    assert labels(evidence.groups[0].neighbours) == ["근로기준법 제60조"]
    assert labels(evidence.as_parts(lead=3)[0]) == ["근로기준법 제23조", "근로기준법 제60조"]
