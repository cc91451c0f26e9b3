"""AnswerPipeline: enhance → route → (lookup | chitchat | plan → retrieve → grade → rewrite once → generate →
verify → follow-ups), emitted as a stream of AnswerEvents. It only calls stages in order."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag import messages
from rag.errors import LlmUnavailable, RetrievalUnavailable
from rag.models import Answer, AnswerEvent, Citation, Hit, Message, Route, Scope, Turn
from rag.retrieval.retriever import HybridRetriever
from rag.stages.enhancer import EnhancedQuery
from rag.stages.generator import DraftAnswer, GenerationInput
from rag.stages.grader import GradeResult
from rag.stages.planner import QueryPlan
from rag.stages.router import RouteDecision
from rag.stages.structural import StructuralAnswerer
from rag.stages.verifier import VerificationResult
from rag.text import normalize_text

log = logging.getLogger(__name__)


class Enhancer(Protocol):
    async def run(self, question: str, history: tuple[Message, ...]) -> EnhancedQuery: ...


class Router(Protocol):
    async def run(self, question: str) -> RouteDecision: ...


class Planner(Protocol):
    async def run(self, question: str) -> QueryPlan: ...


class Grader(Protocol):
    async def run(self, question: str, hits: list[Hit], *, parts: int = 1) -> GradeResult: ...


class Rewriter(Protocol):
    async def run(self, question: str, missing: tuple[str, ...]) -> str: ...


class Generator(Protocol):
    """Streams text via `stream`; the final draft (text + citations) via `finish`."""

    def stream(self, request: GenerationInput) -> AsyncIterator[str]: ...

    def finish(self) -> DraftAnswer: ...


class Verifier(Protocol):
    async def run(self, text: str, citations: tuple[Citation, ...]) -> VerificationResult: ...


class FollowupSuggester(Protocol):
    async def run(self, question: str, hits: list[Hit], cited_chunk_ids: set[str]) -> tuple[str, ...]: ...


@dataclass
class PipelineStages:
    """The stages the pipeline calls; each is the LLM implementation or its offline sibling."""

    enhancer: Enhancer
    router: Router
    planner: Planner
    grader: Grader
    rewriter: Rewriter
    generator_factory: Any  # () -> Generator: a fresh generator per turn (it keeps the draft)
    verifier: Verifier
    followups: FollowupSuggester
    structural: StructuralAnswerer


@dataclass
class PipelineConfig:
    retrieve_k: int = 8
    per_query_k: int = 6
    max_total_hits: int = 12
    answer_deadline_s: float = 60.0
    stage_timeout_s: float = 20.0


@dataclass
class TurnTrace:
    """Per-turn timings, LLM-call count and flow log."""

    started: float = field(default_factory=time.perf_counter)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = round(self.timings_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000, 2)

    def note(self, line: str) -> None:
        self.notes.append(line)


def merge_hits(per_query: list[list[Hit]], limit: int) -> list[Hit]:
    """Round-robin over the sub-queries' rankings, so no sub-topic is dropped by a global top-k."""
    merged: list[Hit] = []
    seen: set[str] = set()
    depth = max((len(h) for h in per_query), default=0)
    for rank in range(depth):
        for hits in per_query:
            if rank < len(hits) and hits[rank].chunk.chunk_id not in seen:
                seen.add(hits[rank].chunk.chunk_id)
                merged.append(hits[rank])
    return merged[:limit]


class AnswerPipeline:
    """Answers one Turn as a stream of AnswerEvents; always ends with `done` or `error`."""

    def __init__(self, *, stages: PipelineStages, retriever: HybridRetriever,
                 config: PipelineConfig | None = None, llm_calls=None) -> None:
        self.stages = stages
        self.retriever = retriever
        self.config = config or PipelineConfig()
        # Counts LLM calls per turn when an LLM is configured (callable returning an int), else zero.
        self.llm_calls = llm_calls or (lambda: 0)

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        trace = TurnTrace()
        calls_before = self.llm_calls()
        streamed: list[str] = []
        queue: asyncio.Queue[AnswerEvent | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async with asyncio.timeout(self.config.answer_deadline_s):
                    async for event in self._answer(turn, trace, calls_before):
                        await queue.put(event)
            except TimeoutError:
                note = messages.TIMEOUT if not streamed else f"{messages.STREAM_INTERRUPTED}\n{messages.TIMEOUT}"
                await queue.put(AnswerEvent.error(note))
            except RetrievalUnavailable as exc:
                log.warning("turn %s: retrieval unavailable: %s", turn.turn_id, exc)
                await queue.put(AnswerEvent.error(messages.INDEX_UNAVAILABLE))
            except Exception:
                log.exception("turn %s: pipeline failed", turn.turn_id)
                await queue.put(AnswerEvent.error(messages.INTERNAL_ERROR))
            finally:
                await queue.put(None)

        task = asyncio.create_task(produce())
        try:
            while (event := await queue.get()) is not None:
                if event.kind == "delta":
                    streamed.append(event.text)
                yield event
        finally:
            if not task.done():
                task.cancel()

    async def _answer(self, turn: Turn, trace: TurnTrace, calls_before: int) -> AsyncIterator[AnswerEvent]:
        question = normalize_text(turn.text).strip()
        yield AnswerEvent.status(messages.STATUS_UNDERSTANDING)
        with trace.stage("enhance"):
            enhanced = await self.stages.enhancer.run(question, turn.history)
        if enhanced.used_history:
            trace.note(f"enhanced with history: {enhanced.text}")
        route = turn.force_route
        if route is None:
            with trace.stage("route"):
                decision = await self.stages.router.run(question)
            route = decision.route
            if route == Route.SEARCH and enhanced.used_history:
                decision = await self.stages.router.run(enhanced.text)
                route = Route.SEARCH if decision.route == Route.CHITCHAT else decision.route
        else:
            decision = RouteDecision(route=route)
        trace.note(f"route: {route.value}")

        if route == Route.CHITCHAT:
            text = {"greeting": messages.CHITCHAT_GREETING, "thanks": messages.CHITCHAT_THANKS}.get(
                decision.chitchat_kind, messages.CHITCHAT_OTHER)
            yield AnswerEvent.delta(text)
            yield AnswerEvent.done(self._answer_model(text, route, trace, calls_before))
            return

        if route == Route.LOOKUP:
            yield AnswerEvent.status(messages.STATUS_LOOKUP)
            with trace.stage("lookup"):
                draft, result = await self.stages.structural.run(question, turn.scope)
            if result.kind in ("not_found", "ambiguous") and turn.force_route is None:
                route = Route.SEARCH  # a name that looked like a reference but is not one: search instead
            else:
                yield AnswerEvent.delta(draft.text)
                if draft.citations:
                    yield AnswerEvent.sources(draft.citations)
                hits = [Hit(chunk=c, score=1.0) for c in result.chunks]
                yield AnswerEvent.done(self._answer_model(draft.text, route, trace, calls_before,
                                                          citations=draft.citations, hits=hits,
                                                          grounded=bool(draft.citations)))
                return

        async for event in self._search(turn, enhanced, trace, calls_before):
            yield event

    async def _search(self, turn: Turn, enhanced: EnhancedQuery, trace: TurnTrace,
                      calls_before: int) -> AsyncIterator[AnswerEvent]:
        with trace.stage("plan"):
            plan = await self.stages.planner.run(enhanced.text)
        trace.note(f"plan: {plan.strategy.value} {list(plan.search_queries)}")
        yield AnswerEvent.status(messages.STATUS_SEARCHING)
        with trace.stage("retrieve"):
            per_query = await self.retriever.search_many(plan.search_queries, k=self.config.per_query_k,
                                                         scope=turn.scope)
        hits = merge_hits(per_query, self.config.max_total_hits)
        parts = max(len(plan.sub_questions), 1)
        with trace.stage("grade"):
            grade = await self.stages.grader.run(enhanced.text, hits, parts=parts)
        trace.note(f"grade: {grade.score} passed={grade.passed} missing={list(grade.missing)}")
        if not grade.passed:
            yield AnswerEvent.status(messages.STATUS_RESEARCHING)
            with trace.stage("rewrite"):
                rewritten = await self.stages.rewriter.run(enhanced.text, grade.missing)
            trace.note(f"rewrite: {rewritten}")
            with trace.stage("retrieve"):
                second = await self.retriever.search(rewritten, k=self.config.per_query_k, scope=turn.scope)
            hits = merge_hits([hits, second], self.config.max_total_hits)
            per_query = [*per_query, second]
            with trace.stage("grade"):
                grade = await self.stages.grader.run(enhanced.text, hits, parts=parts)  # against the original
            trace.note(f"regrade: {grade.score} passed={grade.passed}")
        if not grade.passed:
            text = messages.NOT_FOUND
            yield AnswerEvent.delta(text)
            yield AnswerEvent.done(self._answer_model(text, Route.SEARCH, trace, calls_before, hits=hits,
                                                      grounded=False))
            return

        relevant = set(grade.relevant)
        evidence = [[h for h in q if h.chunk.chunk_id in relevant] or q for q in per_query]
        if plan.sub_questions:
            evidence = evidence[1 : 1 + len(plan.sub_questions)]
        else:
            evidence = [[h for h in hits if h.chunk.chunk_id in relevant] or hits]
        request = GenerationInput(question=enhanced.text, sub_questions=plan.sub_questions,
                                  evidence=tuple(tuple(e) for e in evidence))
        yield AnswerEvent.status(messages.STATUS_WRITING)
        generator = self.stages.generator_factory()
        streamed: list[str] = []
        notes: list[str] = []
        with trace.stage("generate"):
            try:
                async for piece in generator.stream(request):
                    streamed.append(piece)
                    yield AnswerEvent.delta(piece)
            except LlmUnavailable as exc:
                log.warning("turn %s: generation interrupted: %s", turn.turn_id, exc)
                notes.append(messages.STREAM_INTERRUPTED if streamed else messages.OFFLINE_NOTE)
        draft = generator.finish()
        text = draft.text if draft.text else "".join(streamed)
        yield AnswerEvent.status(messages.STATUS_VERIFYING)
        with trace.stage("verify"):
            verified = await self.stages.verifier.run(text, draft.citations)
        if not verified.supported:
            trace.note(f"verifier removed {len(verified.removed)} sentence(s)")
            notes.append(messages.UNVERIFIED_NOTE)
        final_text = verified.text.rstrip() + ("\n\n" + "\n".join(notes) if notes else "")
        used = {int(m) for m in re.findall(r"\[(\d+)\]", final_text)}
        citations = tuple(c for c in draft.citations if c.index in used) or draft.citations
        yield AnswerEvent.sources(citations)
        with trace.stage("followups"):
            followups = await self.stages.followups.run(enhanced.text, hits, {c.chunk_id for c in citations})
        if followups:
            yield AnswerEvent.followup_questions(followups)
        yield AnswerEvent.done(self._answer_model(final_text, Route.SEARCH, trace, calls_before,
                                                  citations=citations, hits=hits, followups=followups))

    def _answer_model(self, text: str, route: Route, trace: TurnTrace, calls_before: int, *,
                      citations: tuple[Citation, ...] = (), hits: list[Hit] | None = None,
                      followups: tuple[str, ...] = (), grounded: bool = True) -> Answer:
        trace.timings_ms["total"] = round((time.perf_counter() - trace.started) * 1000, 2)
        return Answer(text=text, route=route, citations=citations, followups=followups, grounded=grounded,
                      llm_calls=self.llm_calls() - calls_before, timings_ms=dict(trace.timings_ms),
                      retrieved=tuple(hits or ()), notes=tuple(trace.notes))


async def collect(pipeline: AnswerPipeline, text: str, *, history: tuple[Message, ...] = (),
                  scope: Scope | None = None, turn_id: str = "cli") -> tuple[Answer | None, list[AnswerEvent]]:
    """Run one question to the end; returns the final Answer (None after an error) and every event."""
    events: list[AnswerEvent] = []
    answer: Answer | None = None
    async for event in pipeline.run(Turn(turn_id=turn_id, text=text, history=history, scope=scope or Scope())):
        events.append(event)
        if event.answer is not None:
            answer = event.answer
    return answer, events
