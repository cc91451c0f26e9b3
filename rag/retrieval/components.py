"""The steps of hybrid retrieval, one small component each, with typed inputs and outputs.

`HybridRetriever` wires them in one visible place (`HybridRetriever._run`), as a Haystack pipeline would:

    ScopeFilter → QueryEmbedder → DomainDetector → (hard mode) DomainFilter
      → LexicalSearch ∥ DenseSearch → Fusion → PriorWeighting → Deduplication
      → Reranker → ArticleDiversity → SanctionLinks → PurposeLink (rag/retrieval/links.py) → DomainBudget

Every knob is a `RetrievalConfig` field, which `bot/config.py` exposes as `REGBOT_RETRIEVAL_<FIELD>`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.errors import RetrievalUnavailable
from rag.lang.reference import ARTICLE_NUMBER_NAMED, NAME_WINDOW
from rag.models import Hit, Scope
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.domains import DomainClassifier, DomainDecision
from rag.retrieval.fusion import convex_fusion, protect_confident, weighted_rrf
from rag.retrieval.names import DocumentNames
from rag.retrieval.query import AnalyzedQuery
from rag.text import doc_key

log = logging.getLogger(__name__)

# "제60조", "제19조의2" (not "제60조제1항"'s paragraph: the article is what ranks).


@dataclass(frozen=True)
class Ranking:
    """One retriever's candidates, best first: (chunk id, raw score)."""

    name: str
    items: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Candidate:
    """A fused candidate: its score and each retriever's rank of it."""

    chunk_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)


# A citation's article number follows its regulation's name closely ("근로기준법 제60조", "**근로기준법** 제60조"),
# and a second number joins the first closely ("제60조, 제61조", "제60조 및 제61조"); characters, markup counted.
_NAME_GAP = 4
_JOIN_GAP = 4


@dataclass(frozen=True)
class QueryDomains:
    """The question's domains (for priors and budgets) and the regulations it names."""

    decision: DomainDecision
    named_documents: tuple[str, ...] = ()
    cited: tuple[tuple[str, str], ...] = ()  # (document, article) the earlier reply a follow-up leans on cited
    moved_on: bool = False  # the follow-up's own words rank another article well ahead of the cited ones (focus.py)


class ScopeFilter:
    """The chunks a query may see: the scope's collections and audience, no 삭제 text, no 폐지 text unless the
    question asks for it, and only text in force on `effective_on`."""

    def __init__(self, corpus: IndexedCorpus, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.config = config

    def run(self, analyzed: AnalyzedQuery, scope: Scope) -> np.ndarray:
        # A question about repealed text says so (rag/data/asks.yaml); otherwise 폐지 documents stay out.
        repealed = self.config.include_repealed or analyzed.facets.repealed
        return self.corpus.mask(scope, include_repealed=repealed, effective_on=self.config.effective_on)


class QueryEmbedder:
    """The query vector for dense search and domain similarity, or None (no dense index, weight 0, failure)."""

    def __init__(self, corpus: IndexedCorpus, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.config = config

    def text(self, analyzed: AnalyzedQuery) -> str:
        """The text the dense model embeds (see `RetrievalConfig.dense_query`)."""
        if self.config.dense_query == "keywords":
            return " ".join(dict.fromkeys((*analyzed.context_tokens, *analyzed.tokens)))
        limit = self.config.dense_context_chars
        if limit is not None and len(analyzed.context) > limit:
            analyzed = analyzed.model_copy(update={"context": analyzed.context[:limit]})
        return analyzed.dense_text if self.config.dense_query == "expanded" else analyzed.all_text

    def run(self, analyzed: AnalyzedQuery) -> list[float] | None:
        dense = self.corpus.dense
        if dense is None or self.config.dense_weight <= 0:
            return None
        try:
            return dense.embed_query(self.text(analyzed))
        except Exception as exc:  # an embedder failure must not stop lexical search
            log.warning("query embedding failed, lexical only: %s", exc.__class__.__name__)
            return None


class DomainDetector:
    """Keyword ∪ vector domains of the question; a regulation the question names (title, file name or alias)
    settles the domain. Also keeps each chunk's domain, refreshed when the corpus changes."""

    def __init__(self, corpus: IndexedCorpus, classifier: DomainClassifier, aliases: Mapping[str, str]) -> None:
        self.corpus = corpus
        self.classifier = classifier
        self.aliases = dict(aliases)
        self._version = -2
        self._names: DocumentNames | None = None
        self.chunk_domains: list[str] = []
        self.domain_codes: np.ndarray = np.array([], dtype=np.int16)  # per chunk: index in domain_names, -1 none
        self.domain_names: list[str] = []

    def refresh(self) -> None:
        if self._version == self.corpus.version:
            return
        chunks = self.corpus.chunks
        self.chunk_domains = [self.classifier.document_domain(c.doc, c.domain) for c in chunks]
        self.domain_names = sorted({d for d in self.chunk_domains if d})
        self.domain_codes = np.array([self.domain_names.index(d) if d else -1 for d in self.chunk_domains],
                                     dtype=np.int16)
        self._names = DocumentNames(self.corpus.documents(), aliases=self.aliases)
        self._version = self.corpus.version

    def run(self, analyzed: AnalyzedQuery, vector: Sequence[float] | None) -> QueryDomains:
        self.refresh()
        decision = self.classifier.classify(analyzed, vector)
        named = self.named_documents(analyzed.all_text)
        if named:
            named_domains = {self.classifier.document_domain(doc) for doc in named} - {""}
            if named_domains:
                # A named regulation settles its domain; a domain the words point to as well stays (secondary).
                kept = tuple(d for d in decision.domains if d not in named_domains and decision.keyword_hits.get(d))
                decision = decision.model_copy(update={"domains": (*sorted(named_domains), *kept), "named": True})
        cited = tuple(sorted(self.cited_articles(analyzed.context))) if analyzed.context else ()
        return QueryDomains(decision=decision, named_documents=tuple(named), cited=cited)

    def named_documents(self, text: str) -> list[str]:
        """Regulations the text names (by title, file name or alias), longest names first."""
        self.refresh()
        if self._names is None:
            return []
        compact = doc_key(text)
        found: list[str] = []
        covered: list[str] = []
        for key, doc in sorted(self._names.keys.items(), key=lambda kv: -len(kv[0])):
            if len(key) >= 3 and key in compact and not any(key in longer for longer in covered):
                covered.append(key)
                if doc not in found:
                    found.append(doc)
        return found

    def cited_articles(self, text: str) -> set[tuple[str, str]]:
        """(document, article) of each "…법 제60조" an earlier reply cites: an article number right after a
        regulation's name, or joined to such a citation ("근로기준법 제60조 및 제61조"). A number inside a quoted
        provision ("제17조에 따른 …") names its own law's article, not a citation of the reply's, and is skipped."""
        self.refresh()
        if self._names is None or "조" not in text:
            return set()
        keys = sorted(((k, d) for k, d in self._names.keys.items() if len(k) >= 3), key=lambda kv: -len(kv[0]))
        found: set[tuple[str, str]] = set()
        last, previous_end = "", -_JOIN_GAP - 1
        for match in ARTICLE_NUMBER_NAMED.finditer(text):
            window = doc_key(text[max(0, match.start() - NAME_WINDOW): match.start()])
            ends = [(window.rfind(k) + len(k), len(k), d) for k, d in keys if k in window]
            named = max(ends) if ends else None
            if named is not None and len(window) - named[0] <= _NAME_GAP:
                last = named[2]
            elif not last or match.start() - previous_end > _JOIN_GAP:
                continue
            found.add((last, match.group(0).replace(" ", "")))
            previous_end = match.end()
        return found

    def domain_of(self, chunk_id: str) -> str:
        position = self.corpus.position.get(chunk_id)
        return self.chunk_domains[position] if position is not None else ""


class DomainFilter:
    """Hard domain mode: only the question's domains (and chunks without one) stay visible."""

    def __init__(self, detector: DomainDetector, config: RetrievalConfig) -> None:
        self.detector = detector
        self.config = config

    def run(self, mask: np.ndarray, domains: QueryDomains) -> np.ndarray:
        wanted_names = domains.decision.domains
        if self.config.domain_mode != "hard" or not wanted_names:
            return mask
        names = self.detector.domain_names
        wanted = [names.index(d) for d in wanted_names if d in names]
        codes = self.detector.domain_codes
        return mask & (np.isin(codes, wanted) | (codes < 0))


class LexicalSearch:
    """Kiwi-BM25 over body and title fields; own words weigh more than expansions and earlier turns."""

    def __init__(self, corpus: IndexedCorpus, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.config = config

    def run(self, analyzed: AnalyzedQuery, mask: np.ndarray) -> Ranking:
        weights = analyzed.weighted_tokens(expansion_weight=self.config.expansion_weight,
                                           context_weight=self.config.context_weight)
        return self._search("lexical", weights, mask)

    def signals(self, analyzed: AnalyzedQuery, mask: np.ndarray) -> list[Ranking]:
        """Further lexical rankings fused beside the main one, each where its weight is set: the question's own
        words alone (`plain_lexical`: no expansions, no earlier turns, the plain BM25 a search box runs) and a long
        question's core alone (`core_lexical`: its last clause, so the story's words cannot outvote the ask)."""
        out = []
        if self.config.plain_lexical_weight > 0 and analyzed.tokens:
            out.append(self._search("plain_lexical", dict.fromkeys(analyzed.tokens, 1.0), mask))
        if self.config.core_lexical_weight > 0 and analyzed.core_tokens:
            out.append(self._search("core_lexical", dict.fromkeys(analyzed.core_tokens, 1.0), mask))
        return out

    def _search(self, name: str, weights: Mapping[str, float], mask: np.ndarray) -> Ranking:
        found = self.corpus.lexical.search(weights, self.config.depth, mask=mask, title_weight=self.config.title_weight)
        return Ranking(name, tuple((self.corpus.chunks[i].chunk_id, s) for i, s in found))


class DenseSearch:
    """e5 cosine search: over the mirrored vectors when loaded, else through Chroma."""

    def __init__(self, corpus: IndexedCorpus, config: RetrievalConfig, embedder: QueryEmbedder) -> None:
        self.corpus = corpus
        self.config = config
        self.embedder = embedder

    def run(self, analyzed: AnalyzedQuery, vector: Sequence[float] | None, scope: Scope, mask: np.ndarray
            ) -> Ranking | None:
        if vector is None or self.config.dense_weight <= 0:
            return None
        corpus = self.corpus
        if corpus.vectors is not None:
            found = corpus.dense_search(vector, self.config.depth, mask)
            return Ranking("dense", tuple((corpus.chunks[i].chunk_id, s) for i, s in found))
        dense = corpus.dense
        if dense is None:
            return None
        try:
            found_ids = dense.search(self.embedder.text(analyzed), self.config.depth,
                                     collections=scope.collections, vector=list(vector))
        except RetrievalUnavailable as exc:
            log.warning("dense retrieval unavailable, lexical only: %s", exc)
            return None
        position = corpus.position
        return Ranking("dense", tuple((cid, s) for cid, s in found_ids if cid in position and mask[position[cid]]))


class Fusion:
    """Score-aware convex fusion (or weighted RRF), then lexical-confident candidates are protected (by default
    only plain-page chunks, which have no article label)."""

    def __init__(self, corpus: IndexedCorpus, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.config = config

    def _plain(self, chunk_id: str) -> bool:
        chunk = self.corpus.get(chunk_id)
        return chunk is not None and not chunk.article

    def run(self, rankings: Sequence[Ranking], *, foreign: bool = False) -> list[Candidate]:
        config = self.config
        weights = {"lexical": config.lexical_weight,
                   "dense": config.foreign_dense_weight if foreign else config.dense_weight,
                   "plain_lexical": config.plain_lexical_weight, "core_lexical": config.core_lexical_weight}
        if config.fusion == "rrf":
            fused = weighted_rrf({r.name: [i for i, _ in r.items] for r in rankings}, weights, k=config.rrf_k)
        else:
            fused = convex_fusion({r.name: r.items for r in rankings}, weights,
                                  floors={"lexical": 0.0, "dense": config.dense_floor, "plain_lexical": 0.0,
                                          "core_lexical": 0.0},
                                  methods={"lexical": config.lexical_normalization,
                                           "dense": config.dense_normalization})
        lexical = next((r for r in rankings if r.name == "lexical"), None)
        if lexical is not None and len(rankings) > 1 and config.protect_depth > 0:
            fused = protect_confident(fused, lexical.items, depth=config.protect_depth, ratio=config.protect_ratio,
                                      eligible=self._plain if config.protect_plain_only else None)
        return [Candidate(chunk_id=i, score=s, ranks=r) for i, s, r in fused]


# The columns of `PriorWeighting.flags`: each multiplies a candidate's fused score by its factor when set.
PRIOR_FLAGS = ("outside_named_domain", "outside_vector_domain", "named_document", "cited_article", "cited_document",
               "subordinate")


class PriorWeighting:
    """Multiplies a candidate's fused score: demoted outside the question's domain, boosted in a regulation the
    question names, and — for a follow-up — in the articles (and regulations) the previous reply cited; a
    subordinate regulation's article (a 시행령 under its law) weighs by its own factor unless the question names it."""

    def __init__(self, corpus: IndexedCorpus, detector: DomainDetector, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.detector = detector
        self.config = config

    @property
    def factors(self) -> np.ndarray:
        """One factor per `PRIOR_FLAGS` column."""
        config = self.config
        return np.array([config.out_of_domain_factor, config.vector_domain_factor, config.named_document_boost,
                         config.cited_article_boost, config.cited_document_boost, config.subordinate_factor])

    def flags(self, chunk_ids: Sequence[str], domains: QueryDomains) -> np.ndarray:
        """Candidates × `PRIOR_FLAGS` (bool); a chunk no longer in the corpus has none."""
        decision = domains.decision
        wanted = set(decision.domains) if self.config.domain_mode == "soft" else set()
        by_words = bool(decision.keyword_hits or decision.named)
        named = set(domains.named_documents)
        cited = set(domains.cited)
        cited_docs = {doc for doc, _ in cited}
        position, chunks, chunk_domains = self.corpus.position, self.corpus.chunks, self.detector.chunk_domains
        subordinate = self.corpus.subordinate
        out = np.zeros((len(chunk_ids), len(PRIOR_FLAGS)), dtype=bool)
        for n, chunk_id in enumerate(chunk_ids):
            at = position.get(chunk_id)
            if at is None:
                continue
            domain, chunk = chunk_domains[at], chunks[at]
            if wanted and domain and domain not in wanted:
                out[n, 0 if by_words else 1] = True
            out[n, 2] = chunk.doc in named
            out[n, 3] = (chunk.doc, chunk.article) in cited
            out[n, 4] = chunk.doc in cited_docs and not out[n, 3]
            out[n, 5] = chunk.doc in subordinate and chunk.doc not in named
        return out

    def run(self, candidates: Sequence[Candidate], domains: QueryDomains) -> list[Candidate]:
        present = [c for c in candidates if c.chunk_id in self.corpus.position]  # a vector whose chunk is gone
        if not present:
            return []
        factors = self.factors.copy()
        if domains.moved_on:
            factors[PRIOR_FLAGS.index("cited_article")] *= self.config.cited_focus_factor
        values = np.where(self.flags([c.chunk_id for c in present], domains), factors, 1.0).prod(axis=1)
        out = [Candidate(c.chunk_id, c.score * float(v), c.ranks) for c, v in zip(present, values, strict=True)]
        out.sort(key=lambda c: -c.score)
        return out


class Deduplication:
    """Candidates as hits, outside-scope chunks dropped, identical text (the same article in two collections)
    returned once."""

    def __init__(self, corpus: IndexedCorpus) -> None:
        self.corpus = corpus

    def run(self, candidates: Sequence[Candidate], mask: np.ndarray, limit: int) -> list[Hit]:
        hits: list[Hit] = []
        seen_text: set[str] = set()
        for candidate in candidates:
            at = self.corpus.position.get(candidate.chunk_id)
            if at is None or not mask[at]:
                continue
            chunk = self.corpus.chunks[at]
            if chunk.content_hash in seen_text:
                continue
            seen_text.add(chunk.content_hash)
            hits.append(Hit(chunk=chunk, score=candidate.score, ranks=candidate.ranks))
            if len(hits) >= limit:
                break
        return hits


class ArticleDiversity:
    """The best hit of each article in order, then the articles' other parts in order (chunks without an
    article label count as distinct)."""

    def __init__(self, config: RetrievalConfig) -> None:
        self.config = config

    def run(self, hits: Sequence[Hit]) -> list[Hit]:
        if not self.config.one_part_per_article:
            return list(hits)
        return distinct_articles_first(hits)


def distinct_articles_first(hits: Sequence[Hit]) -> list[Hit]:
    """The best hit of each article in order, then the articles' other parts in order."""
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


class DomainBudget:
    """When a question spans several domains, each keeps `min_hits_per_domain` of the top k: its best candidates
    move up from below the cut, replacing the lowest hits of over-represented domains."""

    def __init__(self, detector: DomainDetector, config: RetrievalConfig) -> None:
        self.detector = detector
        self.config = config

    def run(self, hits: Sequence[Hit], k: int, domains: QueryDomains) -> list[Hit]:
        wanted = domains.decision.domains
        share = self.config.min_hits_per_domain
        if len(wanted) < 2 or share <= 0:
            return list(hits)
        domain_of = self.detector.domain_of
        head, tail = list(hits[:k]), list(hits[k:])
        for domain in wanted:
            have = sum(1 for h in head if domain_of(h.chunk.chunk_id) == domain)
            for _ in range(share - have):
                candidate = next((h for h in tail if domain_of(h.chunk.chunk_id) == domain), None)
                if candidate is None:
                    break
                counts = {d: sum(1 for h in head if domain_of(h.chunk.chunk_id) == d) for d in wanted}
                victim = next((h for h in reversed(head)
                               if counts.get(domain_of(h.chunk.chunk_id), 0) > share
                               or domain_of(h.chunk.chunk_id) not in wanted), None)
                if victim is None:
                    break
                head.remove(victim)
                tail.remove(candidate)
                head.append(candidate)
                tail.insert(0, victim)
        return head + tail
