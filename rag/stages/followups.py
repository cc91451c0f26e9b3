"""Follow-up questions: 2–3 short next questions grounded in the retrieved articles."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from pydantic import BaseModel, Field

from rag.lang import FOREIGN, detect_language
from rag.llm import LlmProvider, LlmUnavailable, fence
from rag.models import Chunk, Hit
from rag.retrieval.neighbours import NeighbourExpander
from rag.stages.structured_output import complete_structured
from rag.text import collapse_spaces, normalize_text

log = logging.getLogger(__name__)

MAX_FOLLOWUPS = 3
MAX_CHARS = 60
# Offline: a related article offered as a question (a button's text).
ABOUT_ARTICLE = "{doc} {article}({title})에 대해 알려줘"
# For an English or Vietnamese question, the reference alone: no Korean sentence on its button, and the lookup
# reads a bare reference (a word of another language around it would make it a search).
REFERENCE_ONLY = "{doc} {article}({title})"

# Only articles the bot actually retrieved are listed, and the questions must be answerable from them, so a
# follow-up button never leads to "not found".
FOLLOWUP_PROMPT = """\
당신은 회사 규정 안내 봇입니다. 사용자가 방금 한 질문과 검색된 조문 목록을 보고, 사용자가 이어서 물어볼 만한 \
짧은 질문 2~3개를 record_result 도구로 주세요.
- 목록의 조문으로 답할 수 있는 질문만, 방금 질문과 겹치지 않게.
- 사용자가 쓸 법한 말투의 한 문장, 40자 이내.
"""

FOLLOWUP_SCHEMA = {
    "type": "object",
    "properties": {"questions": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_FOLLOWUPS}},
    "required": ["questions"],
}


class OfflineFollowupSuggester:
    """Asks about the related articles that were retrieved but not cited, by their titles; first, when the answer
    cites a law's article, the 시행령 article that implements it (its details: "법 제55조제1항에 따른 …")."""

    def __init__(self, citations: NeighbourExpander | None = None) -> None:
        self.citations = citations

    async def run(self, question: str, hits: list[Hit], cited_chunk_ids: set[str],
                  proposed: tuple[str, ...] = ()) -> tuple[str, ...]:
        cited = next((h.chunk for h in hits if h.chunk.chunk_id in cited_chunk_ids), None)
        implementing = self.citations.implementing(cited.doc, cited.article)[:1] \
            if self.citations is not None and cited is not None else []
        return about_articles(question, [*implementing, *(h.chunk for h in hits)], skip=cited_chunk_ids)


def about_articles(question: str, chunks: Iterable[Chunk], *, skip: Collection[str] = (),
                   at_most: int = MAX_FOLLOWUPS) -> tuple[str, ...]:
    """Buttons that look up articles ("근로기준법 제56조(연장 근로)에 대해 알려줘"), one per title, in order; never an
    article in `skip` nor one whose title the question already holds. An English or Vietnamese question gets them
    the reference alone ("근로기준법 제56조(연장 근로)"), which looks the article up just the same."""
    template = REFERENCE_ONLY if detect_language(question) in FOREIGN else ABOUT_ARTICLE
    out: list[str] = []
    seen_titles: set[str] = set()
    for chunk in chunks:
        if chunk.chunk_id in skip or not chunk.title or chunk.kind != "article":
            continue
        if chunk.title in seen_titles or chunk.title in question:
            continue
        seen_titles.add(chunk.title)
        button = template.format(doc=chunk.doc, article=chunk.article, title=chunk.title)
        # Cut, it would no longer look the article up: a long name keeps the bare reference instead.
        out.append(button if len(button) <= MAX_CHARS else f"{chunk.doc} {chunk.article}"[:MAX_CHARS])
        if len(out) == at_most:
            break
    return tuple(out)


def clean_followups(question: str, candidates: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """At most three distinct, short questions that are not the question just asked."""
    asked = collapse_spaces(normalize_text(question))
    out: list[str] = []
    for candidate in candidates:
        text = collapse_spaces(normalize_text(candidate)).strip(" -•\"'")
        if not text or text == asked or text in out or len(text) > MAX_CHARS:
            continue
        out.append(text)
        if len(out) == MAX_FOLLOWUPS:
            break
    return tuple(out)


class _FollowupReply(BaseModel):
    questions: list[str] = Field(default_factory=list)


class LlmFollowupSuggester:
    """Keeps the generator's own suggestions when it gave two or more; otherwise one fast call; offline last.

    The LLM generator writes follow-ups at the end of its answer, so on the common path this stage makes no call.
    """

    def __init__(self, llm: LlmProvider, *, fallback: OfflineFollowupSuggester, timeout_s: float = 8.0,
                 hang_s: float = 2.5, prompt: str = FOLLOWUP_PROMPT) -> None:
        self.llm = llm
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.hang_s = hang_s
        self.prompt = prompt

    async def run(self, question: str, hits: list[Hit], cited_chunk_ids: set[str],
                  proposed: tuple[str, ...] = ()) -> tuple[str, ...]:
        suggested = clean_followups(question, proposed)
        if len(suggested) >= 2:
            return suggested
        if not hits or not self.llm.available:
            return await self.fallback.run(question, hits, cited_chunk_ids)
        articles = "\n".join(f"- {h.chunk.label}" + (f"({h.chunk.title})" if h.chunk.title else "")
                             for h in hits[:10])
        try:
            reply = await complete_structured(self.llm, system=self.prompt,
                                              user=fence("질문", question) + "\n\n" + fence("검색된 조문", articles),
                                              schema=FOLLOWUP_SCHEMA, output=_FollowupReply,
                                              timeout_s=self.timeout_s, hang_s=self.hang_s, stage="followups",
                                              max_tokens=300)
        except LlmUnavailable as exc:
            log.warning("follow-ups fall back offline: %s", exc)
            return await self.fallback.run(question, hits, cited_chunk_ids)
        return clean_followups(question, reply.questions) or await self.fallback.run(question, hits, cited_chunk_ids)
