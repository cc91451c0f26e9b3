"""Hybrid retrieval: Kiwi-BM25 and dense search fused by weighted RRF, deduplicated and reranked."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from rag.errors import RetrievalUnavailable
from rag.models import Hit, Scope
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.fusion import weighted_rrf
from rag.retrieval.query import AnalyzedQuery, QueryAnalyzer
from rag.retrieval.rerank import HeuristicReranker, Reranker

log = logging.getLogger(__name__)


class RetrievalConfig(BaseModel):
    """Weights and depths; lexical is weighted above dense because Kiwi-BM25 is the stronger retriever here."""

    model_config = ConfigDict(frozen=True)

    lexical_weight: float = 1.0
    dense_weight: float = 0.6
    depth: int = 50  # candidates taken from each retriever
    rrf_k: int = 60


class HybridRetriever:
    """Searches the corpus for one query; `search_many` runs several planned queries in parallel."""

    def __init__(self, corpus: IndexedCorpus, analyzer: QueryAnalyzer, *, reranker: Reranker | None = None,
                 config: RetrievalConfig | None = None) -> None:
        self.corpus = corpus
        self.analyzer = analyzer
        self.reranker = reranker or HeuristicReranker()
        self.config = config or RetrievalConfig()

    async def search(self, query: str, *, k: int = 10, scope: Scope | None = None) -> list[Hit]:
        return await asyncio.to_thread(self.search_sync, query, k=k, scope=scope)

    async def search_many(self, queries: Sequence[str], *, k: int = 10, scope: Scope | None = None) -> list[list[Hit]]:
        return list(await asyncio.gather(*(self.search(q, k=k, scope=scope) for q in queries)))

    def search_sync(self, query: str, *, k: int = 10, scope: Scope | None = None) -> list[Hit]:
        scope = scope or Scope()
        self.corpus.refresh()
        if not self.corpus.chunks:
            raise RetrievalUnavailable("the index is empty: run `regbot ingest` first")
        analyzed = self.analyzer.analyze(query)
        rankings = {"lexical": self._lexical(analyzed, scope)}
        if self.corpus.dense is not None and self.config.dense_weight > 0:
            try:
                rankings["dense"] = [cid for cid, _ in self.corpus.dense.search(
                    analyzed.dense_text, self.config.depth, collections=scope.collections)]
            except RetrievalUnavailable as exc:
                log.warning("dense retrieval unavailable, lexical only: %s", exc)
        fused = weighted_rrf(rankings, {"lexical": self.config.lexical_weight, "dense": self.config.dense_weight},
                             k=self.config.rrf_k)
        mask = self.corpus.mask(scope)
        hits: list[Hit] = []
        seen_text: set[str] = set()
        for chunk_id, score, ranks in fused:
            position = self.corpus.position.get(chunk_id)
            if position is None or not mask[position]:
                continue  # a vector whose chunk is gone, or outside the scope
            chunk = self.corpus.chunks[position]
            if chunk.content_hash in seen_text:
                continue
            seen_text.add(chunk.content_hash)
            hits.append(Hit(chunk=chunk, score=score, ranks=ranks))
        return self.reranker.rerank(analyzed, hits)[:k]

    def _lexical(self, analyzed: AnalyzedQuery, scope: Scope) -> list[str]:
        mask = self.corpus.mask(scope)
        found = self.corpus.lexical.search(analyzed.lexical_tokens, self.config.depth, mask=mask)
        return [self.corpus.chunks[i].chunk_id for i, _ in found]
