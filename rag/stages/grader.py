"""Grader: can the retrieved evidence answer the question? A fail triggers one rewrite and re-search."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rag.models import Hit
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.tokenizer import Tokenizer


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    score: float  # 0–100
    missing: tuple[str, ...] = ()  # query words the evidence does not contain
    relevant: tuple[str, ...] = ()  # chunk ids judged relevant (all, offline)


class OfflineGrader:
    """Sufficiency from the evidence: IDF-weighted share of the question's words found in the top hits.

    Rare words weigh most, so "사내 카페" fails on a corpus that never mentions 카페 even though 사내 matches.
    The threshold rises with the number of question parts (a compound question needs more coverage).
    """

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, pass_score: float = 55.0,
                 top_n: int = 3) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.pass_score = pass_score
        self.top_n = top_n

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1) -> GradeResult:
        terms = [t for t in dict.fromkeys(self.tokenizer.tokens(question)) if len(t) > 1 or t.isdigit()]
        if not hits or not terms:
            return GradeResult(passed=False, score=0.0, missing=tuple(terms))
        evidence = self.tokenizer.tokens_many([h.chunk.text for h in hits[: self.top_n * max(parts, 1)]])
        found = set().union(*map(set, evidence))
        weights = {t: self.corpus.idf(t) for t in terms}
        covered = sum(w for t, w in weights.items() if t in found or any(t in f for f in found if len(t) > 1))
        score = 100.0 * covered / (sum(weights.values()) or 1.0)
        missing = tuple(t for t in terms if t not in found)
        return GradeResult(passed=score >= self.pass_score, score=round(score, 1), missing=missing,
                           relevant=tuple(h.chunk.chunk_id for h in hits))
