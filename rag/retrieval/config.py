"""Retrieval settings: every knob of the retrieval components, with its default (kept free of heavy imports,
so `bot/config.py` can expose it as `REGBOT_RETRIEVAL_*`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# Weights of the kinds of query words in lexical scoring: the user's own words count fully; table expansions and
# words from earlier turns help but must not outrank a real match on the question itself.
OWN_WEIGHT = 1.0
EXPANSION_WEIGHT = 0.6
CONTEXT_WEIGHT = 0.5


class RetrievalConfig(BaseModel):
    """Weights and depths of every step. Lexical leads (Kiwi-BM25 is the stronger retriever on statutes); dense
    adds recall for colloquial wording. The defaults were chosen on the dev set and checked on a held-out set."""

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
    # Lexical-confident candidates keep a place in the fused top `protect_depth`: a lexical candidate ranked
    # within that depth whose BM25 score is at least `protect_ratio` of the best one cannot be pushed below it by
    # the weaker retriever. On page-level text (plain pages without 조 structure; a public OCR'd-pages benchmark
    # had Kiwi-BM25 alone at R@5 0.991 and the fusion at 0.965) lexical is the stronger retriever, so by default
    # only such plain chunks are protected (`protect_plain_only`); on statutes dense rescues colloquial wording
    # (protecting articles too cost dev colloquial Hit@5 0.944 -> 0.833). 0 turns protection off.
    protect_depth: int = 5
    protect_ratio: float = 0.8
    protect_plain_only: bool = True
    title_weight: float = 0.5  # BM25 weight of the article-title field relative to the body
    expansion_weight: float = EXPANSION_WEIGHT
    context_weight: float = CONTEXT_WEIGHT
    domain_mode: Literal["soft", "hard", "off"] = "soft"  # demote, drop, or ignore hits outside the domain
    # The question vector names a domain at cosine >= threshold with a lead of `domain_margin` over the runner-up;
    # a domain the words point to is kept as a second topic when the vector ranks it within `domain_secondary_rank`.
    domain_threshold: float = 0.82
    domain_margin: float = 0.01
    domain_secondary_rank: int = 2
    out_of_domain_factor: float = 0.6  # the question's words, audience or a named regulation set the domain
    vector_domain_factor: float = 0.85  # only the question vector did (weaker evidence, milder demotion)
    named_document_boost: float = 1.3  # the question names a regulation ("근로기준법 위반…")
    # What the dense model reads: the question (and the earlier turn it leans on), plus the synonym-table terms
    # it lacks ("expanded"), or without them ("plain": fewer tokens, so a faster e5 query, and the same text the
    # answer cache embeds, so its vector is reused).
    dense_query: Literal["expanded", "plain", "keywords"] = "plain"
    # Which reranker orders the fused candidates: the IDF-coverage heuristic, a local cross-encoder
    # (`rerank_model` names its folder), the LLM (listwise, with the heuristic as fallback), or none.
    reranker: Literal["heuristic", "cross_encoder", "llm", "none"] = "heuristic"
    rerank_model: str = ""
    rerank_depth: int = 40
    # The heuristic reranker: fused score + IDF-weighted coverage of the question by the title and the body;
    # 부칙 and stub annexes are multiplied by the penalty; earlier-turn words count at `rerank_context_weight`.
    rerank_title_weight: float = 0.35
    rerank_body_weight: float = 0.35
    rerank_addenda_penalty: float = 0.5
    rerank_context_weight: float = 0.3
    # One part per article in the ranking (its other parts follow the distinct articles): a long article's
    # three parts would otherwise fill the slots of a question's second topic. Neighbour expansion adds them back.
    one_part_per_article: bool = True
    # Budget: when a question spans several domains, each keeps at least this many of the k hits (its best
    # candidates are moved up from below the cut), so "공무원 연가랑 근로자 연차" gets both regulations.
    min_hits_per_domain: int = 1
    include_repealed: bool = False
    effective_on: str = ""  # YYYY-MM-DD: only text in force on that date
