"""Retrieval settings: every knob of the retrieval components, with its default (kept free of heavy imports,
so `bot/config.py` can expose it as `REGBOT_RETRIEVAL_*`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

# Weights of the kinds of query words in lexical scoring: the user's own words count fully; table expansions and
# words from earlier turns help but must not outrank a real match on the question itself.
OWN_WEIGHT = 1.0
EXPANSION_WEIGHT = 0.6
CONTEXT_WEIGHT = 0.2  # follow-ups of dev + held-out-1/2 (30): Hit@1 0.60 → 0.70 against 0.5; 0.1 the same


RANKING_FIT = Path(__file__).resolve().parent.parent / "data" / "ranking_fit.yaml"


def load_ranking_fit(path: Path = RANKING_FIT) -> dict[str, float]:
    """The fitted ranking values (`benchmarks/ranking_fit.py` writes them with their provenance); {} without."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return {}
    return {str(k): float(v) for k, v in (data.get("values") or {}).items()}


_FIT = load_ranking_fit()
# The dense weight of English and Vietnamese questions, fitted on the foreign sets (benchmarks/fit_foreign_weight.py).
_FOREIGN_FIT = load_ranking_fit(RANKING_FIT.with_name("foreign_fit.yaml"))


def fitted(name: str, default: float) -> float:
    """A knob's default: its fitted value when `ranking_fit.yaml` has one, else the hand-set `default`."""
    return _FIT.get(name, default)


class RetrievalConfig(BaseModel):
    """Weights and depths of every step. Lexical leads (Kiwi-BM25 is the stronger retriever on statutes); dense
    adds recall for colloquial wording. The defaults were chosen on the dev set and checked on a held-out set."""

    model_config = ConfigDict(frozen=True)

    fusion: Literal["score", "rrf"] = Field(
        "score", description="How lexical and dense rankings are fused: `score` (normalised scores, weighted) or "
                             "`rrf` (weighted reciprocal rank).")
    # BM25 min-max from 0; e5 cosines are bunched, so their spread over the candidates tells a real match apart.
    lexical_normalization: Literal["minmax", "distribution"] = Field(
        "minmax", description="How BM25 scores are put on one scale for score fusion.")
    dense_normalization: Literal["minmax", "distribution"] = Field(
        "distribution", description="How e5 cosines are put on one scale for score fusion.")
    lexical_weight: float = Field(1.0, description="Weight of Kiwi-BM25 in the fusion (the stronger retriever).")
    dense_weight: float = Field(fitted("dense_weight", 0.4),
        description="Weight of dense (e5) search in the fusion; 0 turns dense "
                    "retrieval off (faster queries, no Chroma).")
    # Hand-set at 0.7 on foreign-dev and heldout-foreign-1; 5-fold CV on the four foreign tuning sets (231
    # answerable) chose it in every fold (rag/data/foreign_fit.yaml, its provenance).
    foreign_dense_weight: float = Field(
        _FOREIGN_FIT.get("foreign_dense_weight", 0.7),
        description="Weight of dense search for an English or Vietnamese question, whose lexical side reads "
                    "only the glossary's Korean words while multilingual e5 reads the question itself.")
    plain_lexical_weight: float = Field(
        fitted("plain_lexical_weight", 0.0),
        description="Weight of a second BM25 ranking on the question's own words alone (no expansions, no earlier "
                    "turns) in the fusion; 0 turns it off.")
    core_lexical_weight: float = Field(
        fitted("core_lexical_weight", 0.0),
        description="Weight of a BM25 ranking on a long question's core (its last clause) in the fusion; 0 turns "
                    "it off.")
    depth: int = Field(50, description="Candidates taken from each retriever.")
    rrf_k: int = Field(60, description="The k of reciprocal rank fusion (`fusion=rrf`).")
    dense_floor: float = Field(0.75, description="Cosine that counts as no match in score fusion.")
    # On page-level text (plain pages without 조 structure; a public OCR'd-pages benchmark had Kiwi-BM25 alone at
    # R@5 0.991 and the fusion at 0.965) lexical is the stronger retriever, so by default only plain chunks are
    # protected; on statutes dense rescues colloquial wording (protecting articles cost dev colloquial Hit@5
    # 0.944 -> 0.833).
    protect_depth: int = Field(5, description="A lexical candidate within this rank whose BM25 score is at least "
                                              "`protect_ratio` of the best cannot be pushed below it by dense "
                                              "search; 0 turns protection off.")
    protect_ratio: float = Field(0.8, description="Share of the best BM25 score a candidate needs to be protected.")
    protect_plain_only: bool = Field(True, description="Protect only chunks without article structure (pages).")
    title_weight: float = Field(0.5, description="BM25 weight of the article-title field relative to the body.")
    expansion_weight: float = Field(EXPANSION_WEIGHT, description="Weight of synonym-table expansions in BM25.")
    context_weight: float = Field(fitted("context_weight", CONTEXT_WEIGHT),
        description="Weight of earlier-turn words a follow-up leans on.")
    domain_mode: Literal["soft", "hard", "off"] = Field(
        "soft", description="Hits outside the question's domain are demoted (`soft`), dropped (`hard`) or kept.")
    domain_threshold: float = Field(0.82, description="Cosine at which the question vector names a domain.")
    domain_margin: float = Field(0.01, description="Lead over the runner-up domain the vector needs.")
    domain_secondary_rank: int = Field(2, description="A domain the words name is kept as a second topic when the "
                                                      "vector ranks it within this rank.")
    out_of_domain_factor: float = Field(fitted("out_of_domain_factor", 0.6),
        description="Score factor outside a domain the question's words, "
                    "audience or a named regulation set.")
    vector_domain_factor: float = Field(fitted("vector_domain_factor", 0.85),
        description="Score factor outside a domain only the vector set.")
    named_document_boost: float = Field(fitted("named_document_boost", 1.3),
        description="Score factor of a regulation the question names.")
    cited_article_boost: float = Field(fitted("cited_article_boost", 1.0),
        description="Score factor of an article the previous reply cited, "
                    "for a follow-up that leans on it.")
    cited_focus_factor: float = Field(fitted("cited_focus_factor", 1.0), gt=0,
        description="Multiplies the score of an article the previous reply cited when the follow-up's own "
                    "words, ranked alone, score it under `cited_focus_share` of their best: the follow-up asks "
                    "about something else.")
    cited_focus_share: float = Field(fitted("cited_focus_share", 0.8), ge=0, le=1,
        description="Share of the own words' best score under which a follow-up has moved on from the cited "
                    "article.")
    subordinate_factor: float = Field(fitted("subordinate_factor", 1.0), gt=0,
        description="Factor for an article of a subordinate regulation (one whose name extends another "
                    "document's: 근로기준법 시행령 under 근로기준법) unless the question names it.")
    cited_document_boost: float = Field(fitted("cited_document_boost", 1.0),
        description="Score factor of the other articles of a regulation the "
                    "previous reply cited, for a follow-up.")
    dense_query: Literal["expanded", "plain", "keywords"] = Field(
        "plain", description="What the dense model reads: the question as asked (`plain`, the text the answer "
                             "cache embeds too), with synonym terms (`expanded`), or its keywords.")
    dense_context_chars: int | None = Field(
        60, ge=0, description="Earlier-turn characters the dense model reads before a follow-up (none: all of the "
                              "folded context). Query embedding time grows with length; beyond 60 characters no "
                              "eval set's ranking changed.")
    reranker: Literal["heuristic", "cross_encoder", "llm", "none"] = Field(
        "heuristic", description="What orders the fused candidates: the IDF-coverage heuristic, a local "
                                 "cross-encoder (`rerank_model`), the LLM (heuristic as fallback), or none.")
    rerank_model: str = Field("", description="Folder of the cross-encoder model (`reranker=cross_encoder`).")
    rerank_depth: int = Field(40, description="Fused candidates the reranker reorders.")
    rerank_title_weight: float = Field(fitted("rerank_title_weight", 0.35),
        description="Heuristic reranker: weight of title coverage.")
    rerank_body_weight: float = Field(fitted("rerank_body_weight", 0.35),
        description="Heuristic reranker: weight of body coverage.")
    # The question's words together in one paragraph, not scattered over a long article: dev + held-out-1..6
    # pooled Hit@1 0.727 → 0.745 at 0.2 (0.3–0.4 the same Hit@1, fewer compounds with every gold).
    rerank_paragraph_weight: float = Field(fitted("rerank_paragraph_weight", 0.2),
        description="Heuristic reranker: weight of the coverage of the "
                    "article's best-covering paragraph (항).")
    # "몇 주는 수업해야 해?" shares only 수업 with "수업일수는 … 30주 이상": the unit asked for is the other clue.
    # dev + held-out-1..11, set means: Hit@1 .721 → .735, MRR .797 → .806 (0.1: .732; 0.3: .741 but out of
    # scope refused .843 → .826).
    rerank_quantity_weight: float = Field(fitted("rerank_quantity_weight", 0.2),
        description="Heuristic reranker: weight of stating a figure in the "
                    "unit the question asks for (몇 주 → 30주).")
    rerank_core_weight: float = Field(fitted("rerank_core_weight", 0.0),
        description="Heuristic reranker: weight of the coverage of a long "
                    "question's core (its last clause, after the story).")
    rerank_defines_weight: float = Field(fitted("rerank_defines_weight", 0.0),
        description="Heuristic reranker: weight of defining the term a "
                    "question asks whether something counts as (임금에 해당하는지 → 제2조).")
    rerank_addenda_penalty: float = Field(fitted("rerank_addenda_penalty", 0.5),
        description="Heuristic reranker: factor for 부칙 and stub annexes.")
    rerank_context_weight: float = Field(fitted("rerank_context_weight", 0.3),
        description="Heuristic reranker: weight of earlier-turn words.")
    one_part_per_article: bool = Field(True, description="One part per article in the ranking (other parts follow), "
                                                         "so a long article cannot crowd out a second topic.")
    min_hits_per_domain: int = Field(1, description="When a question spans domains, each keeps at least this many "
                                                    "of the top hits.")
    sanction_sources: int = Field(2, ge=0, description="A question about a sanction (처벌, 벌금, 과태료) moves the "
                                                       "벌칙/과태료 article that cites one of this many top hits "
                                                       "just ahead of it; 0 turns it off.")
    include_repealed: bool = Field(False, description="Search repealed (폐지) documents too.")
    effective_on: str = Field("", description="YYYY-MM-DD: only text in force on that date; empty: today's text.")
