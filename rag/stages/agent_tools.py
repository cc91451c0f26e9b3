"""The tools the answer's LLM may call while it writes: look up an article, search, outline a regulation.

Regulations lean on each other ("제1항에 따른", "법 제46조", "별표 2의 기준에 따라"): the generator offers these
tools so an answer can read what the article it quotes points to. Every tool runs the existing retrieval and
structural lookup through the narrow protocols below, scoped to the turn's collections; what they return is
untrusted text like any other evidence (fenced in the prompt, numbered as a source, citable).
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from rag import messages
from rag.llm import ToolCall, ToolSpec
from rag.models import Chunk, Hit, Scope
from rag.retrieval.lookup import LookupResult

MAX_HITS = 3
MAX_OUTLINE_LINES = 40
STATUS_CHARS = 30

TOOL_SPECS = (
    ToolSpec(
        name="lookup_article",
        description="등록된 규정에서 조문 하나를 그대로 가져옵니다. 답에 필요한 조문이 다른 조문(예: '제46조에 따른', "
                    "'별표 2')을 가리킬 때 쓰세요.",
        input_schema={"type": "object", "properties": {
            "doc": {"type": "string", "description": "규정·법령 이름, 예: 근로기준법"},
            "article": {"type": "string", "description": "조문, 예: 제46조, 제43조의2, 별표 2, 부칙"}},
            "required": ["doc", "article"]},
    ),
    ToolSpec(
        name="search_regulations",
        description="등록된 규정에서 검색어와 관련된 조문을 최대 3개 찾습니다.",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ),
    ToolSpec(
        name="regulation_overview",
        description="규정 하나의 장·조 제목 목차를 가져옵니다.",
        input_schema={"type": "object", "properties": {"doc": {"type": "string"}}, "required": ["doc"]},
    ),
)


class ReferenceLookup(Protocol):
    """The structural lookup's public entry point (rag.retrieval.lookup.StructuralLookup)."""

    def lookup(self, query: str, scope: Scope | None = None) -> LookupResult: ...


class RegulationSearch(Protocol):
    """The hybrid retriever's public entry point (rag.retrieval.retriever.HybridRetriever)."""

    async def search(self, query: str, *, k: int = 10, scope: Scope | None = None) -> list[Hit]: ...


class ToolOutcome(BaseModel):
    """What one tool call produced: the chunks it found (new sources), or a short note when it found none."""

    model_config = ConfigDict(frozen=True)

    chunks: tuple[Chunk, ...] = ()
    note: str = ""  # e.g. an outline, or "찾지 못했습니다"


class AgentTools:
    """Runs the generator's tool calls against retrieval, within the turn's scope."""

    specs = TOOL_SPECS

    def __init__(self, *, lookup: ReferenceLookup, search: RegulationSearch) -> None:
        self._lookup = lookup
        self._search = search

    @staticmethod
    def status(call: ToolCall) -> str:
        """The status line a user sees while `call` runs."""
        args = call.arguments
        if call.name == "lookup_article":
            return messages.STATUS_TOOL_ARTICLE.format(article=_short(str(args.get("article", "")) or "조문"))
        if call.name == "search_regulations":
            return messages.STATUS_TOOL_SEARCH.format(query=_short(str(args.get("query", ""))))
        return messages.STATUS_TOOL_OVERVIEW.format(doc=_short(str(args.get("doc", "")) or "규정"))

    async def run(self, call: ToolCall, scope: Scope | None) -> ToolOutcome:
        """Execute one call; an unknown tool or bad arguments give a note, never an exception."""
        args: dict[str, Any] = call.arguments
        if call.name == "lookup_article":
            doc, article = str(args.get("doc", "")).strip(), str(args.get("article", "")).strip()
            if not doc or not article:
                return ToolOutcome(note="doc와 article을 모두 주세요.")
            result = self._lookup.lookup(f"{doc} {article}", scope)
            if result.kind in ("article", "annex", "addenda") and result.chunks:
                return ToolOutcome(chunks=result.chunks[:MAX_HITS])
            return ToolOutcome(note=f"{doc} {article}: 등록된 규정에서 찾지 못했습니다.")
        if call.name == "search_regulations":
            query = str(args.get("query", "")).strip()[:200]
            if not query:
                return ToolOutcome(note="query를 주세요.")
            hits = await self._search.search(query, k=MAX_HITS, scope=scope)
            return ToolOutcome(chunks=tuple(h.chunk for h in hits[:MAX_HITS]),
                               note="" if hits else f"'{query}': 관련 조문을 찾지 못했습니다.")
        if call.name == "regulation_overview":
            doc = str(args.get("doc", "")).strip()
            result = self._lookup.lookup(doc, scope) if doc else None
            if result is None or result.kind != "overview":
                return ToolOutcome(note=f"{doc or '(이름 없음)'}: 등록된 규정에서 찾지 못했습니다.")
            outline = "\n".join(result.outline[:MAX_OUTLINE_LINES])
            return ToolOutcome(note=f"{result.doc} 목차:\n{outline}")
        return ToolOutcome(note=f"{call.name}: 없는 도구입니다.")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= STATUS_CHARS else text[:STATUS_CHARS] + "…"
