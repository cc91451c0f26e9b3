"""Links from a question's kind to the articles that answer it while sharing few words with it: the sanction for
breaking a rule, the purpose of a regulation. Each reads the question's facets (rag/lang/asks.py) and moves the
linked article into the hits; run after the reranker and `ArticleDiversity` (see `HybridRetriever._run`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag.lang.sanctions import SANCTION_TITLE
from rag.models import Hit
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.neighbours import NeighbourExpander
from rag.retrieval.query import AnalyzedQuery


class SanctionLinks:
    """A question about the sanction for breaking a rule ("불이익 주면 사장은 어떤 처벌 받아?") is answered by the
    벌칙/과태료 article that cites the rule by number ("제19조제3항을 위반하여 … 3년 이하의 징역"), which shares
    almost no words with the question: for each of the first `sanction_sources` hits, the part of such an article
    that cites it moves in just ahead of it."""

    def __init__(self, corpus: IndexedCorpus, citations: NeighbourExpander, config: RetrievalConfig) -> None:
        self.corpus = corpus
        self.citations = citations
        self.config = config

    def run(self, analyzed: AnalyzedQuery, hits: Sequence[Hit], mask: np.ndarray) -> list[Hit]:
        sources = self.config.sanction_sources
        if sources <= 0 or not hits or not analyzed.facets.sanction:
            return list(hits)
        found = next((i for i, h in enumerate(hits[:sources]) if SANCTION_TITLE.search(h.chunk.title)), None)
        if found is not None:  # the search found a sanction itself: it answers, the rule it enforces follows
            return [hits[found], *hits[:found], *hits[found + 1:]]
        out = list(hits)
        for source in hits[:sources]:
            for chunk in self.citations.citing(source.chunk.doc, source.chunk.article):
                at = self.corpus.position.get(chunk.chunk_id)
                if chunk.doc != source.chunk.doc or not SANCTION_TITLE.search(chunk.title) or at is None \
                        or not mask[at]:
                    continue
                out = [h for h in out if h.chunk.chunk_id != chunk.chunk_id]
                place = next(i for i, h in enumerate(out) if h.chunk.chunk_id == source.chunk.chunk_id)
                out.insert(place, Hit(chunk=chunk, score=source.score, ranks={"sanction": 1}))
                break
        return out


class PurposeLink:
    """A question about what a regulation is for ("최저임금이라는 게 왜 있는 거야?": the `purpose` cue) is answered
    by its 목적 article (제1조 of a Korean statute or internal regulation), which shares few words with the
    question: the 목적 article of the top hit's document goes first."""

    def __init__(self, corpus: IndexedCorpus) -> None:
        self.corpus = corpus

    def run(self, analyzed: AnalyzedQuery, hits: Sequence[Hit], mask: np.ndarray) -> list[Hit]:
        if not hits or not analyzed.facets.purpose:
            return list(hits)
        top = hits[0]
        purpose = next((c for c in self.corpus.of_document(top.chunk.doc)
                        if c.title == "목적" and not c.part and not c.deleted), None)
        at = self.corpus.position.get(purpose.chunk_id) if purpose is not None else None
        if at is None or not mask[at]:
            return list(hits)
        rest = [h for h in hits if h.chunk.chunk_id != purpose.chunk_id]
        return [Hit(chunk=purpose, score=top.score, ranks={"purpose": 1}), *rest]
