"""A turn's retrieval: its planned queries (the whole question and each part of a compound one), each with its
own budget, merged so every part keeps its best hits; then the evidence each part is answered from, with the
neighbours of its best hits (the article's other parts, the articles it cites).

    RetrievalRequest → PlannedRetrieval → RetrievalResult → EvidenceSelector → Evidence
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

from rag.models import Hit, Scope
from rag.retrieval.neighbours import NeighbourExpander
from rag.retrieval.retriever import Retriever


class PlannedQuery(BaseModel):
    """One search: its text and the question part it serves (None: the whole question)."""

    model_config = ConfigDict(frozen=True)

    text: str
    part: int | None = None


class RetrievalRequest(BaseModel):
    """What to search for one turn. `context` is what a follow-up leans on, searched at a lower weight."""

    model_config = ConfigDict(frozen=True)

    queries: tuple[PlannedQuery, ...] = Field(min_length=1)
    parts: tuple[str, ...] = ()  # the sub-questions of a compound question
    context: str = ""
    scope: Scope = Field(default_factory=Scope)


class QueryHits(BaseModel):
    """One planned query's ranking."""

    model_config = ConfigDict(frozen=True)

    query: PlannedQuery
    hits: tuple[Hit, ...]


class RetrievalResult(BaseModel):
    """The merged ranking (what is graded and reported) and each query's own ranking (what evidence is read
    from)."""

    model_config = ConfigDict(frozen=True)

    hits: tuple[Hit, ...]
    per_query: tuple[QueryHits, ...]
    parts: tuple[str, ...] = ()


class EvidenceGroup(BaseModel):
    """The hits one question part is answered from, best first, then their neighbours."""

    model_config = ConfigDict(frozen=True)

    question: str
    hits: tuple[Hit, ...]
    neighbours: tuple[Hit, ...] = ()


class Evidence(BaseModel):
    """One group per question part (one group for a simple question)."""

    model_config = ConfigDict(frozen=True)

    groups: tuple[EvidenceGroup, ...]

    def as_parts(self, *, lead: int) -> tuple[tuple[Hit, ...], ...]:
        """Per part: its first `lead` hits, its neighbours, then the rest of its hits (the generator reads the
        head of each part, so neighbours sit right after the best hits)."""
        return tuple((*g.hits[:lead], *g.neighbours, *g.hits[lead:]) for g in self.groups)


def merge_hits(rankings: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """Merge several rankings round-robin by rank, so no query's best hits are crowded out by another's long
    tail; an article already taken does not take a second slot until every list is exhausted (its other parts
    follow in the same order). The one merge of hit lists in the tree."""
    merged: list[Hit] = []
    later: list[Hit] = []
    chunk_ids: set[str] = set()
    articles: set[tuple[str, str, str]] = set()
    depth = max((len(hits) for hits in rankings), default=0)
    for rank in range(depth):
        for hits in rankings:
            if rank >= len(hits) or hits[rank].chunk.chunk_id in chunk_ids:
                continue
            hit = hits[rank]
            chunk_ids.add(hit.chunk.chunk_id)
            key = (hit.chunk.collection, hit.chunk.doc, hit.chunk.article)
            if hit.chunk.article and key in articles:
                later.append(hit)
            else:
                articles.add(key)
                merged.append(hit)
    return (merged + later)[:limit]


def planned_queries(search_queries: Sequence[str], sub_questions: Sequence[str]) -> tuple[PlannedQuery, ...]:
    """The planner's queries, typed: with n sub-questions and n + 1 queries, the first is the whole question and
    query i + 1 serves part i (the layout both planners write); any other layout is all whole-question queries."""
    if sub_questions and len(search_queries) == len(sub_questions) + 1:
        return (PlannedQuery(text=search_queries[0]),
                *(PlannedQuery(text=q, part=i) for i, q in enumerate(search_queries[1:])))
    return tuple(PlannedQuery(text=q) for q in search_queries)


class PlannedRetrieval:
    """Runs a turn's planned queries in parallel, `per_query_k` each (a part's own budget), and merges them
    (at most `max_total_hits`) round-robin: the whole question's best hit first, then each part's best, so every
    part's best hits survive the merge however long the others' lists are."""

    def __init__(self, retriever: Retriever, *, per_query_k: int = 6, max_total_hits: int = 12) -> None:
        if per_query_k < 1 or max_total_hits < 1:
            raise ValueError("per_query_k and max_total_hits must be positive")
        self.retriever = retriever
        self.per_query_k = per_query_k
        self.max_total_hits = max_total_hits

    async def run(self, request: RetrievalRequest) -> RetrievalResult:
        found = await self.retriever.search_many([q.text for q in request.queries], k=self.per_query_k,
                                                 scope=request.scope, context=request.context)
        per_query = tuple(QueryHits(query=q, hits=tuple(h)) for q, h in zip(request.queries, found, strict=True))
        return RetrievalResult(hits=tuple(self._merge(per_query)), per_query=per_query, parts=request.parts)

    async def extend(self, result: RetrievalResult, query: str, request: RetrievalRequest) -> RetrievalResult:
        """The result with one more whole-question search (a rewrite after a failed grade) merged in after it."""
        more = await self.retriever.search(query, k=self.per_query_k, scope=request.scope, context=request.context)
        added = QueryHits(query=PlannedQuery(text=query), hits=tuple(more))
        merged = merge_hits([list(result.hits), more], self.max_total_hits)
        return RetrievalResult(hits=tuple(merged), per_query=(*result.per_query, added), parts=result.parts)

    def _merge(self, per_query: Sequence[QueryHits]) -> list[Hit]:
        parts = [list(q.hits) for q in per_query if q.query.part is not None]
        whole = [list(q.hits) for q in per_query if q.query.part is None]
        return merge_hits([*whole, *parts], self.max_total_hits)


class EvidenceSelector:
    """Which hits each question part is answered from: the part's own ranking, kept to what the grader found
    relevant when it found any; the whole question's ranking for a part whose query found nothing. Each group
    gains the neighbours of its best `neighbour_sources` hits, at most `max_neighbours` (0 turns it off)."""

    def __init__(self, expander: NeighbourExpander | None = None, *, neighbour_sources: int = 2,
                 max_neighbours: int = 2, lead: int = 3) -> None:
        self.expander = expander
        self.neighbour_sources = neighbour_sources
        self.max_neighbours = max_neighbours
        self.lead = lead

    def run(self, result: RetrievalResult, relevant: Collection[str], scope: Scope | None = None) -> Evidence:
        def kept(hits: Sequence[Hit]) -> tuple[Hit, ...]:
            chosen = tuple(h for h in hits if h.chunk.chunk_id in relevant)
            return chosen or tuple(hits)

        whole = kept(result.hits)
        if not result.parts:
            groups = [EvidenceGroup(question="", hits=whole)]
        else:
            groups = []
            for index, question in enumerate(result.parts):
                own = [h for q in result.per_query if q.query.part == index for h in q.hits]
                groups.append(EvidenceGroup(question=question, hits=kept(own) if own else whole))
        return Evidence(groups=tuple(self._with_neighbours(g, scope) for g in groups))

    def _with_neighbours(self, group: EvidenceGroup, scope: Scope | None) -> EvidenceGroup:
        if self.expander is None or self.max_neighbours <= 0 or not group.hits:
            return group
        sources = list(group.hits[: self.neighbour_sources])
        expanded = self.expander.expand(sources, scope=scope, max_added=self.max_neighbours)
        present = {h.chunk.chunk_id for h in group.hits}
        added = tuple(h for h in expanded[len(sources):] if h.chunk.chunk_id not in present)
        return group.model_copy(update={"neighbours": added})
