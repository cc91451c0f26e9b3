"""Hybrid retrieval: the components of `rag/retrieval/components.py` wired in one place (`HybridRetriever._run`),
plus what the pipeline asks of retrieval as a whole (`Retriever`): several planned queries with their budgets,
neighbour expansion, and chunks by id."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np

from rag.errors import RetrievalUnavailable
from rag.models import Chunk, Hit, Scope
from rag.retrieval.components import (
    ArticleDiversity,
    Deduplication,
    DenseSearch,
    DomainBudget,
    DomainDetector,
    DomainFilter,
    Fusion,
    LexicalSearch,
    PriorWeighting,
    QueryDomains,
    QueryEmbedder,
    Ranking,
    ScopeFilter,
    distinct_articles_first,
)
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.domains import DomainClassifier, load_domains
from rag.retrieval.focus import FollowupFocus
from rag.retrieval.links import PurposeLink, SanctionLinks
from rag.retrieval.names import load_aliases
from rag.retrieval.neighbours import NeighbourExpander
from rag.retrieval.query import AnalyzedQuery, QueryAnalyzer
from rag.retrieval.rerank import AsyncReranker, HeuristicReranker, Reranker, heuristic_reranker

__all__ = ["HybridRetriever", "RetrievalConfig", "Retriever", "distinct_articles_first"]


class Retriever(Protocol):
    """What the answer pipeline needs from retrieval."""

    async def search(self, query: str, *, k: int = 10, scope: Scope | None = None, context: str = "") -> list[Hit]:
        ...

    async def search_many(self, queries: Sequence[str], *, k: int = 10, scope: Scope | None = None,
                          context: str = "") -> list[list[Hit]]: ...

    def get(self, chunk_id: str) -> Chunk | None: ...


class HybridRetriever:
    """Searches the corpus for one query; `search_many` runs several planned queries in parallel.

    `context` (earlier turns a follow-up leans on) is searched with a lower weight than the question.
    """

    def __init__(self, corpus: IndexedCorpus, analyzer: QueryAnalyzer, *, reranker: Reranker | None = None,
                 config: RetrievalConfig | None = None, domains: DomainClassifier | None = None,
                 aliases: Mapping[str, str] | None = None, neighbours: NeighbourExpander | None = None) -> None:
        self.corpus = corpus
        self.analyzer = analyzer
        config = self.config = config or RetrievalConfig()
        embedder = corpus.dense.embedder if corpus.dense is not None else None
        classifier = domains or DomainClassifier(
            load_domains(), analyzer.tokenizer, embedder=embedder, threshold=config.domain_threshold,
            margin=config.domain_margin, secondary_rank=config.domain_secondary_rank)
        self.reranker: Reranker | None = reranker if reranker is not None else (
            heuristic_reranker(config, corpus.idf) if config.reranker != "none" else None)
        # The steps, in the order `_run` calls them.
        self.scope_filter = ScopeFilter(corpus, config)
        self.query_embedder = QueryEmbedder(corpus, config)
        aliases = aliases if aliases is not None else load_aliases()
        self.domains = DomainDetector(corpus, classifier, aliases)
        self.domain_filter = DomainFilter(self.domains, config)
        self.lexical = LexicalSearch(corpus, config)
        self.dense = DenseSearch(corpus, config, self.query_embedder)
        self.fusion = Fusion(corpus, config)
        self.priors = PriorWeighting(corpus, self.domains, config)
        self.deduplication = Deduplication(corpus)
        self.diversity = ArticleDiversity(config)
        # The citations a 벌칙 article makes are read by the evidence step's expander too: one index of them.
        self.sanctions = SanctionLinks(corpus, neighbours or NeighbourExpander(corpus, aliases=dict(aliases)), config)
        self.purpose = PurposeLink(corpus)
        self.budget = DomainBudget(self.domains, config)
        self.focus = FollowupFocus(config.cited_focus_share)
        self.own_words_reranker = self.reranker if isinstance(self.reranker, HeuristicReranker) \
            else heuristic_reranker(config, corpus.idf)

    async def search(self, query: str, *, k: int = 10, scope: Scope | None = None, context: str = "") -> list[Hit]:
        analyzed = self.analyzer.analyze(query, context=context)
        if isinstance(self.reranker, AsyncReranker):
            hits = await asyncio.to_thread(self._run, analyzed, self.config.rerank_depth, scope, rerank=False)
            reranked = self.diversity.run(await self.reranker.arerank(analyzed, hits))
            # After the model's order, as `_run` does after the heuristic's (the scope's mask is cached).
            mask = self.scope_filter.run(analyzed, scope or Scope())
            return self._links(analyzed, reranked, mask)[:k]
        return await asyncio.to_thread(self._run, analyzed, k, scope)

    async def search_many(self, queries: Sequence[str], *, k: int = 10, scope: Scope | None = None,
                          context: str = "") -> list[list[Hit]]:
        return list(await asyncio.gather(*(self.search(q, k=k, scope=scope, context=context) for q in queries)))

    def search_sync(self, query: str, *, k: int = 10, scope: Scope | None = None, context: str = "") -> list[Hit]:
        return self._run(self.analyzer.analyze(query, context=context), k, scope)

    def get(self, chunk_id: str) -> Chunk | None:
        return self.corpus.get(chunk_id)

    def _links(self, analyzed: AnalyzedQuery, hits: list[Hit], mask: np.ndarray) -> list[Hit]:
        """The articles a question's kind points to that share few words with it: a sanction, a purpose."""
        return self.purpose.run(analyzed, self.sanctions.run(analyzed, hits, mask), mask)

    # --- the pipeline of steps ----------------------------------------------------------------------------------

    def _own_words_ranking(self, analyzed: AnalyzedQuery, mask: np.ndarray, dense: Ranking | None,
                           domains: QueryDomains) -> list[Hit]:
        """A follow-up's own words ranked without the conversation folded in, by the heuristic reranker whatever
        orders the answer (what `benchmarks/focus_fit.py` fitted its share on). The dense ranking is reused: it
        reads at most `dense_context_chars` of the context."""
        own = analyzed.without_context()
        rankings = [self.lexical.run(own, mask), *self.lexical.signals(own, mask), *([dense] if dense else [])]
        candidates = self.priors.run(self.fusion.run(rankings, foreign=own.language != "ko"),
                                     replace(domains, cited=()))
        return self.own_words_reranker.rerank(own, self.deduplication.run(candidates, mask,
                                                                          limit=self.config.rerank_depth))

    def _run(self, analyzed: AnalyzedQuery, k: int, scope: Scope | None, *, rerank: bool = True) -> list[Hit]:
        scope = scope or Scope()
        self.corpus.refresh()
        if not self.corpus.chunks:
            raise RetrievalUnavailable("the index is empty: run `regbot ingest` first")
        mask = self.scope_filter.run(analyzed, scope)
        vector = self.query_embedder.run(analyzed)
        domains = self.domains.run(analyzed, vector)
        mask = self.domain_filter.run(mask, domains)
        rankings = [self.lexical.run(analyzed, mask), *self.lexical.signals(analyzed, mask)]
        dense = self.dense.run(analyzed, vector, scope, mask)
        if dense is not None:
            rankings.append(dense)
        if domains.cited and analyzed.context and self.config.cited_focus_factor != 1.0:
            if self.focus.moved_on(self._own_words_ranking(analyzed, mask, dense, domains), domains.cited):
                domains = replace(domains, moved_on=True)
        candidates = self.priors.run(self.fusion.run(rankings, foreign=analyzed.language != "ko"), domains)
        hits = self.deduplication.run(candidates, mask, limit=max(self.config.rerank_depth, k))
        if rerank and self.reranker is not None:
            hits = self.reranker.rerank(analyzed, hits)
        hits = self.diversity.run(hits)
        if rerank:  # else the caller reranks and links after (`search` with an LLM reranker)
            hits = self._links(analyzed, hits, mask)
        return self.budget.run(hits, k, domains)[:k]
