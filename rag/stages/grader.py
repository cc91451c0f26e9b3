"""Grader: can the retrieved evidence answer the question? A fail triggers one rewrite and re-search."""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag.llm import LlmProvider, LlmUnavailable, fence
from rag.models import Hit
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.structured_output import complete_structured

log = logging.getLogger(__name__)

# Asks for aspects, not words, because the rewriter turns them into a new query; and for the passage numbers
# that help, so the generator never sees (or cites) an off-topic article.
GRADE_PROMPT = """\
당신은 회사 규정·법령 검색 결과의 채점자입니다. <조문>의 번호가 붙은 조문들만으로 <질문>에 답할 수 있는지 판단해 \
record_result 도구로만 답하세요.

- score: 0~100. 조문만으로 질문에 빠짐없이 정확히 답할 수 있으면 90 이상, 일부만 답할 수 있으면 40~69, \
관련 조문이 없으면 20 이하.
- missing: 답하려면 더 찾아야 하는 내용(짧은 명사구, 규정 용어로). 다 찾았으면 빈 배열.
- relevant: 답에 쓸모 있는 조문 번호. 질문과 무관한 조문은 빼세요.
질문이 여러 부분으로 되어 있으면 모든 부분을 기준으로 채점하세요. 일반 상식이 아니라 주어진 조문만 보세요.
"""

GRADE_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "missing": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "relevant": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["score", "missing", "relevant"],
}
PASSAGE_CHARS = 700


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    score: float  # 0–100
    missing: tuple[str, ...] = ()  # offline: query words the evidence lacks; LLM: aspects still to find
    relevant: tuple[str, ...] = ()  # chunk ids judged relevant (all, offline)
    by: Literal["llm", "offline"] = "offline"


class OfflineGrader:
    """Sufficiency from the evidence: the IDF-weighted share of the question's words found in the top hits.

    A colloquial word counts as found when one of its regulation terms (the synonym table: 야근 → 연장근로) is
    found. Rare words weigh most, so "사내 카페" fails on a corpus that never mentions 카페. Between the two
    thresholds the top hit decides: its article title shares a question word, or BM25 is confident.
    """

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, analyzer: QueryAnalyzer | None = None,
                 pass_score: float = 60.0, refuse_score: float = 20.0, confident_bm25: float = 8.0,
                 top_n: int = 3) -> None:
        if not 0 <= refuse_score <= pass_score <= 100:
            raise ValueError("need 0 <= refuse_score <= pass_score <= 100")
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.analyzer = analyzer
        self.pass_score = pass_score
        self.refuse_score = refuse_score
        self.confident_bm25 = confident_bm25
        self.top_n = top_n

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1) -> GradeResult:
        terms = [t for t in dict.fromkeys(self.tokenizer.tokens(question)) if len(t) > 1 or t.isdigit()]
        if not hits or not terms:
            return GradeResult(passed=False, score=0.0, missing=tuple(terms))
        evidence = self.tokenizer.tokens_many([h.chunk.text for h in hits[: self.top_n * max(parts, 1)]])
        found = set().union(*map(set, evidence))
        synonyms = self._synonym_tokens(terms)

        def covered(term: str) -> bool:
            return term in found or any(s in found for s in synonyms.get(term, ()))

        weights = {t: self.corpus.idf(t) for t in terms}
        score = 100.0 * sum(w for t, w in weights.items() if covered(t)) / (sum(weights.values()) or 1.0)
        missing = tuple(t for t in terms if not covered(t))
        # Nouns only: a request verb ("알려줘" → 알리다 → 통지) says nothing about the topic.
        nouns = [t for t in terms if not t.endswith("다")]
        on_topic_terms = set(nouns).union(*(synonyms.get(t, ()) for t in nouns))
        passed = score >= self.pass_score or (
            score >= self.refuse_score and self._top_hit_is_on_topic(on_topic_terms, terms, hits))
        return GradeResult(passed=passed, score=round(score, 1), missing=missing,
                           relevant=tuple(h.chunk.chunk_id for h in hits))

    def _synonym_tokens(self, terms: list[str]) -> dict[str, tuple[str, ...]]:
        if self.analyzer is None:
            return {}
        return {t: tuple(self.analyzer.analyze(t).expansion) for t in terms}

    def _top_hit_is_on_topic(self, topic_terms: set[str], terms: list[str], hits: list[Hit]) -> bool:
        top = hits[0].chunk
        title_tokens = set(self.tokenizer.tokens(top.title)) if top.title else set()
        if title_tokens & topic_terms:
            return True
        bm25 = self.corpus.lexical.scores(terms)
        position = self.corpus.position.get(top.chunk_id)
        return position is not None and float(bm25[position]) >= self.confident_bm25


class _GradeReply(BaseModel):
    score: float = Field(ge=0, le=100)
    missing: list[str] = Field(default_factory=list)
    relevant: list[int] = Field(default_factory=list)


class LlmGrader:
    """A 0–100 judgement by the fast model (pass ≥ `pass_score`) naming missing aspects and the useful passages."""

    def __init__(self, llm: LlmProvider, *, fallback: OfflineGrader, pass_score: float = 70.0,
                 timeout_s: float = 10.0, hang_s: float = 2.5, prompt: str = GRADE_PROMPT) -> None:
        if not 0 <= pass_score <= 100:
            raise ValueError("pass_score must be within 0–100")
        self.llm = llm
        self.fallback = fallback
        self.pass_score = pass_score
        self.timeout_s = timeout_s
        self.hang_s = hang_s
        self.prompt = prompt

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1) -> GradeResult:
        if not hits:
            return await self.fallback.run(question, hits, parts=parts)  # nothing to judge: no call
        try:
            reply = await complete_structured(self.llm, system=self.prompt, user=self._user_message(question, hits),
                                              schema=GRADE_SCHEMA, output=_GradeReply, timeout_s=self.timeout_s,
                                              hang_s=self.hang_s, stage="grade", max_tokens=400)
        except LlmUnavailable as exc:
            log.warning("grading falls back offline: %s", exc)
            return await self.fallback.run(question, hits, parts=parts)
        relevant = tuple(dict.fromkeys(hits[n - 1].chunk.chunk_id for n in reply.relevant if 0 < n <= len(hits)))
        passed = reply.score >= self.pass_score
        if passed and not relevant:
            relevant = tuple(h.chunk.chunk_id for h in hits)  # a pass that named nothing keeps everything
        missing = tuple(m.strip() for m in reply.missing if m.strip())
        return GradeResult(passed=passed, score=reply.score, missing=missing, relevant=relevant, by="llm")

    @staticmethod
    def _user_message(question: str, hits: list[Hit]) -> str:
        passages = []
        for number, hit in enumerate(hits, start=1):
            chunk = hit.chunk
            title = f" ({chunk.title})" if chunk.title else ""
            passages.append(f"[{number}] {chunk.label}{title}\n{chunk.text[:PASSAGE_CHARS]}")
        return fence("조문", "\n\n".join(passages)) + "\n\n" + fence("질문", question)
