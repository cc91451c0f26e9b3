"""Grader: can the retrieved evidence answer the question? A fail triggers one rewrite and re-search."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rag.llm import LlmProvider, fence
from rag.models import Hit
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.answerability import AnswerabilityJudge
from rag.stages.contracts import GradeResult
from rag.stages.llm_stage import LlmOverOffline

# Asks for aspects, not words, because the rewriter turns them into a new query; and for the passage numbers
# that help, so the generator never sees (or cites) an off-topic article. A follow-up is graded on its own words, the
# earlier exchange only saying what it leaves out, as the offline judge does (its prior is on those words too).
GRADE_PROMPT = """\
당신은 회사 규정·법령 검색 결과의 채점자입니다. <조문>의 번호가 붙은 조문들만으로 <질문>에 답할 수 있는지 판단해 \
record_result 도구로만 답하세요.

- score: 0~100. 조문만으로 질문에 빠짐없이 정확히 답할 수 있으면 90 이상, 일부만 답할 수 있으면 40~69, \
관련 조문이 없으면 20 이하.
- missing: 답하려면 더 찾아야 하는 내용(짧은 명사구, 규정 용어로). 다 찾았으면 빈 배열.
- relevant: 답에 쓸모 있는 조문 번호. 질문과 무관한 조문은 빼세요.
질문이 여러 부분으로 되어 있으면 모든 부분을 기준으로 채점하세요. 일반 상식이 아니라 주어진 조문만 보세요.
<대화 기록>이 있으면 <질문>이 생략한 대상을 알아보는 데에만 쓰고, <질문>이 직접 묻는 내용을 기준으로 채점하세요.
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
# The prompt's "일부만 답할 수 있으면 40~69": a partial answer is offered as the closest article, hedged.
HEDGE_SCORE = 40.0
# The offline answerability judgement, given to the LLM as a prior: a reminder that shared words are not an answer.
PRIOR_NOTE = "사전 판단(단어 대조, 참고용): 답변 가능성 {score:.0f}/100, 조문에서 찾지 못한 질문 핵심어: {missing}"


class OfflineGrader:
    """Sufficiency from the evidence: passes when `AnswerabilityJudge` finds the question answerable.

    The score is the judge's answerability (0–100); `missing` lists the content words no top article holds (the
    rewriter searches them once more); `looked_for` names the question's content and `silent_on` the part of it the
    evidence lacks, for the refusal text.
    """

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, analyzer: QueryAnalyzer | None = None,
                 threshold: float | None = None, judge: AnswerabilityJudge | None = None) -> None:
        self.judge = judge or AnswerabilityJudge(corpus, tokenizer, analyzer=analyzer, threshold=threshold)

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1, asked: str = "") -> GradeResult:
        """`question` standalone; `asked`, the user's own words when the conversation made it standalone."""
        assessed = self.judge.assess(question, hits, parts=parts, asked=asked)
        return GradeResult(passed=assessed.answerable, hedge=assessed.outcome == "hedged",
                           score=round(100 * assessed.score, 1), missing=assessed.missing,
                           relevant=tuple(h.chunk.chunk_id for h in hits), looked_for=assessed.looked_for,
                           silent_on=assessed.missing)


class _GradeReply(BaseModel):
    score: float = Field(ge=0, le=100)
    missing: list[str] = Field(default_factory=list)
    relevant: list[int] = Field(default_factory=list)


class LlmGrader(LlmOverOffline[OfflineGrader]):
    """A 0–100 judgement by the fast model (pass ≥ `pass_score`) naming missing aspects and the useful passages."""

    stage = "grade"

    def __init__(self, llm: LlmProvider, *, fallback: OfflineGrader, pass_score: float = 70.0,
                 hedge_score: float = HEDGE_SCORE, timeout_s: float = 10.0, hang_s: float = 2.5,
                 prompt: str = GRADE_PROMPT) -> None:
        if not 0 <= pass_score <= 100:
            raise ValueError("pass_score must be within 0–100")
        super().__init__(llm, fallback=fallback, prompt=prompt, timeout_s=timeout_s, hang_s=hang_s)
        self.pass_score = pass_score
        self.hedge_score = hedge_score

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1, asked: str = "") -> GradeResult:
        prior = await self.fallback.run(question, hits, parts=parts, asked=asked)
        if not hits:
            return prior  # nothing to judge: no call
        # A folded follow-up: its own words are the question, the folded one says what they leave out.
        own, earlier = (asked, question) if asked and asked != question else (question, "")
        reply = await self.ask(self._user_message(own, hits, prior=prior, earlier=earlier), _GradeReply,
                               schema=GRADE_SCHEMA, max_tokens=400)
        if reply is None:
            return prior
        relevant = tuple(dict.fromkeys(hits[n - 1].chunk.chunk_id for n in reply.relevant if 0 < n <= len(hits)))
        passed = reply.score >= self.pass_score
        if passed and not relevant:
            relevant = tuple(h.chunk.chunk_id for h in hits)  # a pass that named nothing keeps everything
        missing = tuple(m.strip() for m in reply.missing if m.strip())
        # A partial answer (the prompt's 40–69), or one the offline judge passes, is hedged, not refused.
        hedge = not passed and (reply.score >= self.hedge_score or prior.passed)
        if hedge and not relevant:
            relevant = tuple(h.chunk.chunk_id for h in hits)
        return GradeResult(passed=passed, hedge=hedge, score=reply.score, missing=missing, relevant=relevant, by="llm",
                           looked_for=prior.looked_for, silent_on=prior.silent_on)

    @staticmethod
    def _user_message(question: str, hits: list[Hit], *, prior: GradeResult | None = None, earlier: str = "") -> str:
        passages = []
        for number, hit in enumerate(hits, start=1):
            chunk = hit.chunk
            title = f" ({chunk.title})" if chunk.title else ""
            passages.append(f"[{number}] {chunk.label}{title}\n{chunk.text[:PASSAGE_CHARS]}")
        note = ""
        if prior is not None:
            note = PRIOR_NOTE.format(score=prior.score, missing=", ".join(prior.missing[:5]) or "없음") + "\n\n"
        context = fence("대화 기록", earlier) + "\n\n" if earlier else ""
        return fence("조문", "\n\n".join(passages)) + "\n\n" + note + context + fence("질문", question)
