"""Hybrid retrieval: Kiwi-BM25 and dense search, fused score-aware (or by weighted RRF), steered by the question's
domain and the regulations it names, deduplicated, and reranked."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from rag.errors import RetrievalUnavailable
from rag.models import Hit, Scope
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.domains import DomainClassifier, DomainDecision, load_domains
from rag.retrieval.fusion import convex_fusion, weighted_rrf
from rag.retrieval.names import DocumentNames, load_aliases
from rag.retrieval.query import CONTEXT_WEIGHT, EXPANSION_WEIGHT, AnalyzedQuery, QueryAnalyzer
from rag.retrieval.rerank import AsyncReranker, HeuristicReranker, Reranker
from rag.text import doc_key

log = logging.getLogger(__name__)

# A question about repealed text says so; otherwise 폐지 documents stay out.
_ASKS_FOR_REPEALED = re.compile(r"폐지(된|되기|전)|옛날\s*규정|예전\s*규정|구\s*규정")


def distinct_articles_first(hits: Sequence[Hit]) -> list[Hit]:
    """The best hit of each article in order, then the articles' other parts in order (chunks without an
    article label count as distinct)."""
    first: list[Hit] = []
    later: list[Hit] = []
    seen: set[tuple[str, str, str]] = set()
    for hit in hits:
        chunk = hit.chunk
        key = (chunk.collection, chunk.doc, chunk.article)
        if chunk.article and key in seen:
            later.append(hit)
        else:
            seen.add(key)
            first.append(hit)
    return first + later


class RetrievalConfig(BaseModel):
    """Weights and depths. Lexical leads (Kiwi-BM25 is the stronger retriever on statutes); dense adds recall for
    colloquial wording. The defaults were chosen on the dev set and checked on a held-out set."""

    model_config = ConfigDict(frozen=True)

    fusion: Literal["score", "rrf"] = "score"
    # How score fusion puts each retriever on one scale: BM25 min-max from 0; e5 cosines are bunched, so their
    # spread over the candidates is what tells a real match apart.
    lexical_normalization: Literal["minmax", "distribution"] = "minmax"
    dense_normalization: Literal["minmax", "distribution"] = "distribution"
    lexical_weight: float = 1.0
    dense_weight: float = 0.4
    depth: int = 50  # candidates taken from each retriever
    rrf_k: int = 60
    dense_floor: float = 0.75  # cosine that counts as "no match" in score fusion (e5 rarely goes below)
    title_weight: float = 0.5  # BM25 weight of the article-title field relative to the body
    expansion_weight: float = EXPANSION_WEIGHT
    context_weight: float = CONTEXT_WEIGHT
    domain_mode: Literal["soft", "hard", "off"] = "soft"  # demote, drop, or ignore hits outside the domain
    out_of_domain_factor: float = 0.6  # the question's words, audience or a named regulation set the domain
    vector_domain_factor: float = 0.85  # only the question vector did (weaker evidence, milder demotion)
    named_document_boost: float = 1.3  # the question names a regulation ("근로기준법 위반…")
    # What the dense model reads: the question (and the earlier turn it leans on), plus the synonym-table terms
    # it lacks ("expanded"), or without them ("plain": fewer tokens, so a faster e5 query, and the same text the
    # answer cache embeds, so its vector is reused).
    dense_query: Literal["expanded", "plain", "keywords"] = "plain"
    rerank_depth: int = 40
    # One part per article in the ranking (its other parts follow the distinct articles): a long article's
    # three parts would otherwise fill the slots of a question's second topic. NeighbourExpander adds them back.
    one_part_per_article: bool = True
    # Budget: when a question spans several domains, each keeps at least this many of the k hits (its best
    # candidates are moved up from below the cut), so "공무원 연가랑 근로자 연차" gets both regulations.
    min_hits_per_domain: int = 1
    include_repealed: bool = False
    effective_on: str = ""  # YYYY-MM-DD: only text in force on that date


class HybridRetriever:
    """Searches the corpus for one query; `search_many` runs several planned queries in parallel.

    `context` (earlier user turns a follow-up leans on) is searched with a lower weight than the question.
    """

    def __init__(self, corpus: IndexedCorpus, analyzer: QueryAnalyzer, *, reranker: Reranker | None = None,
                 config: RetrievalConfig | None = None, domains: DomainClassifier | None = None,
                 aliases: dict[str, str] | None = None) -> None:
        self.corpus = corpus
        self.analyzer = analyzer
        self.config = config or RetrievalConfig()
        self.reranker = reranker or HeuristicReranker(idf=corpus.idf, expansion_weight=self.config.expansion_weight)
        embedder = corpus.dense.embedder if corpus.dense is not None else None
        self.domains = domains or DomainClassifier(load_domains(), analyzer.tokenizer, embedder=embedder)
        self.aliases = aliases if aliases is not None else load_aliases()
        self._names_version = -2
        self._names: DocumentNames | None = None
        self._chunk_domains: list[str] = []
        self._domain_codes: np.ndarray = np.array([], dtype=np.int16)  # per chunk: index in _domain_names, -1 none
        self._domain_names: list[str] = []

    async def search(self, query: str, *, k: int = 10, scope: Scope | None = None, context: str = "") -> list[Hit]:
        analyzed = self.analyzer.analyze(query, context=context)
        if isinstance(self.reranker, AsyncReranker):
            hits = await asyncio.to_thread(self._search, analyzed, self.config.rerank_depth, scope, rerank=False)
            return (await self.reranker.arerank(analyzed, hits))[:k]
        return await asyncio.to_thread(self._search, analyzed, k, scope)

    async def search_many(self, queries: Sequence[str], *, k: int = 10, scope: Scope | None = None,
                          context: str = "") -> list[list[Hit]]:
        return list(await asyncio.gather(*(self.search(q, k=k, scope=scope, context=context) for q in queries)))

    def search_sync(self, query: str, *, k: int = 10, scope: Scope | None = None, context: str = "") -> list[Hit]:
        return self._search(self.analyzer.analyze(query, context=context), k, scope)

    def classify(self, query: str, *, context: str = "") -> DomainDecision:
        """The question's domains (for filters and per-domain budgets in the caller)."""
        analyzed = self.analyzer.analyze(query, context=context)
        self.corpus.refresh()
        self._refresh_columns()
        return self._classify(analyzed, self._query_vector(analyzed))

    # --- internals ---------------------------------------------------------------------------------------------

    def _search(self, analyzed: AnalyzedQuery, k: int, scope: Scope | None, *, rerank: bool = True) -> list[Hit]:
        scope = scope or Scope()
        self.corpus.refresh()
        if not self.corpus.chunks:
            raise RetrievalUnavailable("the index is empty: run `regbot ingest` first")
        self._refresh_columns()
        config = self.config
        mask = self.corpus.mask(scope, include_repealed=config.include_repealed or self._asks_for_repealed(analyzed),
                                effective_on=config.effective_on)
        vector = self._query_vector(analyzed)
        decision = self._classify(analyzed, vector)
        if config.domain_mode == "hard" and decision.domains:
            wanted = [self._domain_names.index(d) for d in decision.domains if d in self._domain_names]
            mask = mask & (np.isin(self._domain_codes, wanted) | (self._domain_codes < 0))
        scored = {"lexical": self._lexical(analyzed, mask)}
        if vector is not None and config.dense_weight > 0:
            scored["dense"] = self._dense(analyzed, vector, scope, mask)
        if config.fusion == "rrf":
            fused = weighted_rrf({n: [i for i, _ in s] for n, s in scored.items()},
                                 {"lexical": config.lexical_weight, "dense": config.dense_weight}, k=config.rrf_k)
        else:
            fused = convex_fusion(scored, {"lexical": config.lexical_weight, "dense": config.dense_weight},
                                  floors={"lexical": 0.0, "dense": config.dense_floor},
                                  methods={"lexical": config.lexical_normalization,
                                           "dense": config.dense_normalization})
        prior = self._prior(analyzed, decision)
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
            hits.append(Hit(chunk=chunk, score=score * prior(position), ranks=ranks))
        hits.sort(key=lambda h: -h.score)
        head = hits[: max(config.rerank_depth, k)]
        if rerank:
            head = self.reranker.rerank(analyzed, head)
        if config.one_part_per_article:
            head = distinct_articles_first(head)
        if len(decision.domains) > 1 and config.min_hits_per_domain > 0:
            head = self._domain_budget(head, k, decision.domains)
        return head[:k]

    def _domain_budget(self, hits: list[Hit], k: int, domains: Sequence[str]) -> list[Hit]:
        """Move each under-represented domain's best hits into the last slots of the top k."""
        def domain_of(hit: Hit) -> str:
            position = self.corpus.position.get(hit.chunk.chunk_id)
            return self._chunk_domains[position] if position is not None else ""

        head, tail = list(hits[:k]), list(hits[k:])
        for domain in domains:
            have = sum(1 for h in head if domain_of(h) == domain)
            for _ in range(self.config.min_hits_per_domain - have):
                candidate = next((h for h in tail if domain_of(h) == domain), None)
                if candidate is None:
                    break
                # The lowest-ranked hit of a domain with more than its share makes room.
                counts = {d: sum(1 for h in head if domain_of(h) == d) for d in domains}
                victim = next((h for h in reversed(head)
                               if counts.get(domain_of(h), 0) > self.config.min_hits_per_domain
                               or domain_of(h) not in domains), None)
                if victim is None:
                    break
                head.remove(victim)
                tail.remove(candidate)
                head.append(candidate)
                tail.insert(0, victim)
        return head + tail

    def _lexical(self, analyzed: AnalyzedQuery, mask: np.ndarray) -> list[tuple[str, float]]:
        weights = analyzed.weighted_tokens(expansion_weight=self.config.expansion_weight,
                                           context_weight=self.config.context_weight)
        found = self.corpus.lexical.search(weights, self.config.depth, mask=mask, title_weight=self.config.title_weight)
        return [(self.corpus.chunks[i].chunk_id, s) for i, s in found]

    def _dense(self, analyzed: AnalyzedQuery, vector: list[float], scope: Scope, mask: np.ndarray
               ) -> list[tuple[str, float]]:
        if self.corpus.vectors is not None:
            chunks = self.corpus.chunks
            return [(chunks[i].chunk_id, s) for i, s in self.corpus.dense_search(vector, self.config.depth, mask)]
        dense = self.corpus.dense
        assert dense is not None
        try:
            found = dense.search(self.dense_query_text(analyzed), self.config.depth, collections=scope.collections,
                                 vector=vector)
        except RetrievalUnavailable as exc:
            log.warning("dense retrieval unavailable, lexical only: %s", exc)
            return []
        position = self.corpus.position
        return [(cid, s) for cid, s in found if cid in position and mask[position[cid]]]

    def _query_vector(self, analyzed: AnalyzedQuery) -> list[float] | None:
        dense = self.corpus.dense
        if dense is None or self.config.dense_weight <= 0:
            return None
        try:
            return dense.embed_query(self.dense_query_text(analyzed))
        except Exception as exc:  # an embedder failure must not stop lexical search
            log.warning("query embedding failed, lexical only: %s", exc.__class__.__name__)
            return None

    def dense_query_text(self, analyzed: AnalyzedQuery) -> str:
        """The text the dense model embeds for a query (see `RetrievalConfig.dense_query`)."""
        if self.config.dense_query == "expanded":
            return analyzed.dense_text
        if self.config.dense_query == "keywords":
            return " ".join(dict.fromkeys((*analyzed.context_tokens, *analyzed.tokens)))
        return analyzed.all_text

    def _classify(self, analyzed: AnalyzedQuery, vector: list[float] | None) -> DomainDecision:
        decision = self.domains.classify(analyzed, vector)
        named = self._named_documents(analyzed)
        if named:
            # A named regulation settles the domain.
            named_domains = {self.domains.document_domain(doc) for doc in named} - {""}
            if named_domains:
                decision = decision.model_copy(update={"domains": tuple(sorted(named_domains)), "named": True})
        return decision

    def _prior(self, analyzed: AnalyzedQuery, decision: DomainDecision) -> Callable[[int], float]:
        """Multiplier of a candidate's fused score (by corpus position): out of the question's domain, or in a
        regulation the question names."""
        config = self.config
        domains = set(decision.domains) if config.domain_mode == "soft" else set()
        by_words = bool(decision.keyword_hits) or decision.named
        outside = config.out_of_domain_factor if by_words else config.vector_domain_factor
        named = set(self._named_documents(analyzed))
        chunks = self.corpus.chunks
        chunk_domains = self._chunk_domains

        def prior(position: int) -> float:
            value = 1.0
            domain = chunk_domains[position]
            if domains and domain and domain not in domains:
                value *= outside
            if named and chunks[position].doc in named:
                value *= config.named_document_boost
            return value

        return prior

    def _named_documents(self, analyzed: AnalyzedQuery) -> list[str]:
        """Regulations the question names (by title, file name or alias), longest names first."""
        if self._names is None:
            return []
        compact = doc_key(analyzed.all_text)
        found: list[str] = []
        covered: list[str] = []
        for key, doc in sorted(self._names.keys.items(), key=lambda kv: -len(kv[0])):
            if len(key) >= 3 and key in compact and not any(key in longer for longer in covered):
                covered.append(key)
                if doc not in found:
                    found.append(doc)
        return found

    def _refresh_columns(self) -> None:
        if self._names_version == self.corpus.version:
            return
        chunks = self.corpus.chunks
        self._chunk_domains = [self.domains.document_domain(c.doc, c.domain) for c in chunks]
        self._domain_names = sorted({d for d in self._chunk_domains if d})
        self._domain_codes = np.array([self._domain_names.index(d) if d else -1 for d in self._chunk_domains],
                                      dtype=np.int16)
        self._names = DocumentNames(self.corpus.documents(), aliases=self.aliases)
        self._names_version = self.corpus.version

    @staticmethod
    def _asks_for_repealed(analyzed: AnalyzedQuery) -> bool:
        return bool(_ASKS_FOR_REPEALED.search(analyzed.all_text))
