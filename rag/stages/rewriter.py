"""Rewriter: after a failed grade, one new query built from what was missing."""

from __future__ import annotations

from pydantic import BaseModel, field_validator

from rag.llm import LlmProvider, fence
from rag.retrieval.query import QueryAnalyzer
from rag.stages.llm_stage import LlmOverOffline
from rag.text import collapse_spaces, normalize_text

# One query, in the regulations' own vocabulary, that keeps the question's subject: a bare list of the missing
# aspects would find articles about them in unrelated regulations.
REWRITE_PROMPT = """\
당신은 회사 규정·법령 검색어를 고치는 도우미입니다. 첫 검색에서 질문의 일부 내용을 찾지 못했습니다.
못 찾은 내용을 찾을 검색어 하나를 record_result 도구로 주세요.
- 규정·법령에 쓰일 법한 용어로 쓰세요(예: 야근 → 연장근로, 월급 → 임금).
- 질문의 주제(누구의, 무엇에 대한)를 검색어에 남기세요.
- 30자 안팎의 한 줄, 설명 없이 검색어만.
"""

NO_ASPECT = "- (채점자가 특정하지 못함)"  # the grader named nothing missing

REWRITE_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}


class OfflineQueryRewriter:
    """Rewrites into regulation vocabulary: the missing words plus their synonym-table terms."""

    def __init__(self, analyzer: QueryAnalyzer) -> None:
        self.analyzer = analyzer

    async def run(self, question: str, missing: tuple[str, ...]) -> str:
        analyzed = self.analyzer.analyze(question)
        words = list(dict.fromkeys([*missing, *analyzed.expansion, *analyzed.tokens]))
        return " ".join(w for w in words if len(w) > 1) or question


class _RewriteReply(BaseModel):
    query: str

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = collapse_spaces(normalize_text(value)).strip()
        if not value:
            raise ValueError("the query is empty")
        return value[:200]


class LlmQueryRewriter(LlmOverOffline[OfflineQueryRewriter]):
    """Asks the fast model for one query aimed at the missing aspects; offline rewrite on failure."""

    stage = "rewrite"

    def __init__(self, llm: LlmProvider, *, fallback: OfflineQueryRewriter, timeout_s: float = 10.0,
                 hang_s: float = 2.5, prompt: str = REWRITE_PROMPT) -> None:
        super().__init__(llm, fallback=fallback, prompt=prompt, timeout_s=timeout_s, hang_s=hang_s)

    async def run(self, question: str, missing: tuple[str, ...]) -> str:
        aspects = "\n".join(f"- {m}" for m in missing) or NO_ASPECT
        user = fence("질문", question) + "\n\n" + fence("찾지 못한 내용", aspects)
        reply = await self.ask(user, _RewriteReply, schema=REWRITE_SCHEMA, max_tokens=150)
        if reply is None:
            return await self.fallback.run(question, missing)
        return reply.query
