"""Rerankers: a lexical/heuristic scorer by default."""

from __future__ import annotations

from typing import Protocol

from rag.models import Hit
from rag.retrieval.query import AnalyzedQuery


class Reranker(Protocol):
    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]: ...


class HeuristicReranker:
    """Adds to the fused score for query terms found in the article title, and demotes 부칙 and annex stubs."""

    def __init__(self, *, title_bonus: float = 0.004, addenda_penalty: float = 0.5) -> None:
        self.title_bonus = title_bonus
        self.addenda_penalty = addenda_penalty

    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]:
        terms = set(query.lexical_tokens)

        def score(hit: Hit) -> float:
            chunk = hit.chunk
            value = hit.score
            value += self.title_bonus * sum(1 for t in terms if len(t) > 1 and t in chunk.title)
            if chunk.kind == "addenda":
                value *= self.addenda_penalty
            return value

        rescored = [hit.model_copy(update={"score": score(hit)}) for hit in hits]
        return sorted(rescored, key=lambda h: -h.score)
