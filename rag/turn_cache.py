"""The answer cache as a turn uses it: a bounded lookup and store (a slow cache never holds a turn up), and a hit
replayed as the turn's events."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from rag.cache import CachedAnswer, CacheMatch, SemanticAnswerCache
from rag.llm import LlmProvider
from rag.models import Answer, AnswerEvent, Chunk, Hit, Route, Scope
from rag.trace import TurnTrace, short

log = logging.getLogger(__name__)


class TurnCache:
    """Looks up and stores one turn's answer within `timeout_s`; `get` finds a cached answer's retrieved chunks."""

    def __init__(self, cache: SemanticAnswerCache, *, get: Callable[[str], Chunk | None], timeout_s: float) -> None:
        self.cache = cache
        self.get = get
        self.timeout_s = timeout_s

    async def lookup(self, question: str, scope: Scope, trace: TurnTrace, index: str) -> CacheMatch | None:
        try:
            with trace.stage("cache"):
                async with asyncio.timeout(self.timeout_s):
                    return await self.cache.lookup(question, scope, index=index)
        except TimeoutError:
            log.warning("answer cache lookup took longer than %s s; answering without it", self.timeout_s)
            return None

    async def store(self, question: str, scope: Scope, answer: Answer, trace: TurnTrace, index: str) -> None:
        retrieved_ids = tuple(h.chunk.chunk_id for h in answer.retrieved)
        entry = CachedAnswer(question=question, text=answer.text, citations=answer.citations,
                             followups=answer.followups, retrieved_ids=retrieved_ids)
        try:
            with trace.stage("cache"):
                async with asyncio.timeout(self.timeout_s):
                    await self.cache.store(question, scope, entry, index=index)
        except TimeoutError:
            log.warning("answer cache store took longer than %s s; skipped", self.timeout_s)

    def replay(self, match: CacheMatch, trace: TurnTrace, *, llm: LlmProvider | None) -> list[AnswerEvent]:
        """The cached answer as the events a fresh one would have sent."""
        cached = match.answer
        trace.note(f"cache hit (similarity {match.similarity}): {short(cached.question)}")
        hits = [Hit(chunk=chunk, score=0.0) for cid in cached.retrieved_ids if (chunk := self.get(cid)) is not None]
        events = [AnswerEvent.delta(cached.text)]
        if cached.citations:
            events.append(AnswerEvent.sources(cached.citations))
        if cached.followups:
            events.append(AnswerEvent.followup_questions(cached.followups))
        answer = trace.answer(cached.text, Route.SEARCH, llm=llm, citations=cached.citations, hits=hits,
                              followups=cached.followups)
        events.append(AnswerEvent.done(answer.model_copy(update={"cache": "hit"})))
        return events
