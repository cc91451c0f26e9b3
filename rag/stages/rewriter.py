"""Rewriter: after a failed grade, one new query built from what was missing."""

from __future__ import annotations

import logging

from pydantic import BaseModel, field_validator

from rag.llm import LlmProvider, LlmUnavailable, fence
from rag.retrieval.query import QueryAnalyzer
from rag.stages.structured_output import complete_structured
from rag.text import collapse_spaces, normalize_text

log = logging.getLogger(__name__)

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


class LlmQueryRewriter:
    """Asks the fast model for one query aimed at the missing aspects; offline rewrite on failure."""

    def __init__(self, llm: LlmProvider, *, fallback: OfflineQueryRewriter, timeout_s: float = 10.0,
                 hang_s: float = 2.5, prompt: str = REWRITE_PROMPT) -> None:
        self.llm = llm
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.hang_s = hang_s
        self.prompt = prompt

    async def run(self, question: str, missing: tuple[str, ...]) -> str:
        aspects = "\n".join(f"- {m}" for m in missing) or NO_ASPECT
        user = fence("질문", question) + "\n\n" + fence("찾지 못한 내용", aspects)
        try:
            reply = await complete_structured(self.llm, system=self.prompt, user=user, schema=REWRITE_SCHEMA,
                                              output=_RewriteReply, timeout_s=self.timeout_s, hang_s=self.hang_s,
                                              stage="rewrite", max_tokens=150)
        except LlmUnavailable as exc:
            log.warning("rewriting falls back offline: %s", exc)
            return await self.fallback.run(question, missing)
        return reply.query
