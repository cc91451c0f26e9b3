"""AnswerPipeline: understand (enhance → route → plan) → (lookup | chitchat | retrieve → grade → rewrite once →
generate → verify → revise once → follow-ups), emitted as a stream of AnswerEvents. It only calls stages in order.

Each turn runs inside its own `LlmCallBudget`, so `Answer.llm_calls` counts what the LLM stages spent; every
non-streaming stage is bounded by `PipelineConfig.stage_timeout_s`, and the whole answer by `answer_deadline_s`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from rag.cache import CachedAnswer, CacheMatch
from rag.errors import LlmUnavailable, RetrievalUnavailable
from rag.lang import detect_language, framing_for
from rag.llm import LlmCallBudget, llm_call_budget
from rag.models import Answer, AnswerEvent, Citation, Hit, Message, Outcome, Route, Scope, Turn, cited_indices
from rag.retrieval.planned import (
    Evidence,
    EvidenceSelector,
    PlannedRetrieval,
    RetrievalRequest,
    RetrievalResult,
    planned_queries,
)
from rag.retrieval.retriever import Retriever
from rag.stages.answerability import refusal_message, related_chunks
from rag.stages.contracts import DraftAnswer, GenerationInput, GradeResult, QueryUnderstanding, VerificationResult
from rag.stages.factory import PipelineStages
from rag.stages.followups import about_articles
from rag.stages.router import OFF_TOPIC
from rag.text import normalize_text

log = logging.getLogger(__name__)

StageT = TypeVar("StageT")
# How many of the closest articles a refusal offers as lookups.
REFUSAL_NEAREST = 2


@dataclass
class PipelineConfig:
    per_query_k: int = 6
    max_total_hits: int = 12
    answer_deadline_s: float = 60.0
    stage_timeout_s: float = 20.0  # any one non-streaming stage; LLM stages fall back well before this
    cache_timeout_s: float = 2.0
    max_llm_calls: int = 5  # per turn (REGBOT_MAX_LLM_CALLS); a stage past the budget uses its offline sibling
    # The operator's switches (REGBOT_ENABLE_SELF_RAG, REGBOT_REWRITE_ROUNDS, REGBOT_HALLUCINATION_CHECK):
    grade: bool = True  # judge the evidence before answering (refusals and rewrites need it)
    rewrite_rounds: int = 1  # rewrite-and-search rounds while the grade fails; each costs up to two LLM calls
    verify: bool = True  # check the answer's cited sentences against their articles


@dataclass
class TurnTrace:
    """Per-turn timings, LLM-call budget and flow log."""

    started: float = field(default_factory=time.perf_counter)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    budget: LlmCallBudget = field(default_factory=lambda: LlmCallBudget(0))

    @property
    def llm_calls(self) -> int:
        return self.budget.calls

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = round(self.timings_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000, 2)

    def note(self, line: str) -> None:
        self.notes.append(line)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class AnswerPipeline:
    """Answers one Turn as a stream of AnswerEvents; always ends with `done` or `error`."""

    def __init__(self, *, stages: PipelineStages, retriever: Retriever, config: PipelineConfig | None = None,
                 evidence: EvidenceSelector | None = None) -> None:
        self.stages = stages
        self.retriever = retriever
        self.config = config or PipelineConfig()
        self.retrieval = PlannedRetrieval(retriever, per_query_k=self.config.per_query_k,
                                          max_total_hits=self.config.max_total_hits)
        self.evidence = evidence or EvidenceSelector()

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        trace = TurnTrace(budget=LlmCallBudget(self.config.max_llm_calls))
        streamed: list[str] = []
        queue: asyncio.Queue[AnswerEvent | None] = asyncio.Queue()
        said = framing_for(detect_language(turn.text))  # errors in the asker's language

        async def produce() -> None:
            try:
                # The budget lives in a context variable: set inside this task, every stage call sees it.
                with llm_call_budget(trace.budget):
                    async with asyncio.timeout(self.config.answer_deadline_s):
                        async for event in self._answer(turn, trace):
                            await queue.put(event)
            except TimeoutError:
                log.warning("turn %s: timed out after %s", turn.turn_id, trace.timings_ms)
                note = said.TIMEOUT if not streamed else f"{said.STREAM_INTERRUPTED}\n{said.TIMEOUT}"
                await queue.put(AnswerEvent.error(note))
            except RetrievalUnavailable as exc:
                log.warning("turn %s: retrieval unavailable: %s", turn.turn_id, exc)
                await queue.put(AnswerEvent.error(said.INDEX_UNAVAILABLE))
            except Exception:
                log.exception("turn %s: pipeline failed", turn.turn_id)
                await queue.put(AnswerEvent.error(said.INTERNAL_ERROR))
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

    async def _timed(self, trace: TurnTrace, name: str, step: Awaitable[StageT]) -> StageT:
        """Run one stage under the per-stage timeout, adding its time to the trace."""
        with trace.stage(name):
            try:
                async with asyncio.timeout(self.config.stage_timeout_s):
                    return await step
            except TimeoutError:
                log.warning("stage %s took longer than %s s", name, self.config.stage_timeout_s)
                raise

    async def _answer(self, turn: Turn, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        question = normalize_text(turn.text).strip()
        # Status lines in the asker's language (rag/lang); the understanding decides it again with the glossary.
        language = detect_language(question)
        yield AnswerEvent.status(framing_for(language).STATUS_UNDERSTANDING)
        if self.stages.amendments is not None:
            self.stages.amendments.keep_current()  # a held version whose date has come is answered from today
        # Only Korean answers are cached: e5 finds an English question close to its Korean twin, whose cached answer
        # is framed in the other language.
        cacheable = self.stages.cache is not None and not turn.history and turn.force_route is None \
            and language == "ko"
        # The index the turn starts on: its answer is stored under it even if an ingest lands meanwhile.
        cache_index = self.stages.cache.index_identity() if cacheable and self.stages.cache else ""
        if cacheable:
            match = await self._cache_lookup(question, turn.scope, trace, cache_index)
            if match is not None:
                for event in self._replay(match, trace):
                    yield event
                return
        understood = await self._timed(trace, "understand",
                                       self.stages.understander.run(question, turn.history, forced=turn.force_route))
        enhanced = understood.enhanced
        if enhanced.used_history:
            trace.note(f"enhanced with history: {enhanced.text}")
        route = understood.decision.route
        trace.note(f"route: {route.value}" + (f" ({understood.by})" if understood.by != "offline" else ""))

        if route == Route.CHITCHAT:
            kind = understood.decision.chitchat_kind
            text = self.stages.smalltalk.reply(kind, question, language=understood.language)
            yield AnswerEvent.delta(text)
            # A question the bot cannot answer is declined: a refusal, not a chat.
            yield AnswerEvent.done(self._answer_model(text, route, trace, grounded=kind != OFF_TOPIC))
            return

        if route == Route.LOOKUP:
            if understood.lookup_query != question:
                trace.note(f"lookup from the conversation: {understood.lookup_query}")
            yield AnswerEvent.status(framing_for(understood.language).STATUS_LOOKUP)
            draft, result = await self._timed(trace, "lookup",
                                              self.stages.structural.run(understood.lookup_query, turn.scope))
            if result.kind in ("not_found", "ambiguous") and not result.exact and turn.force_route is None:
                route = Route.SEARCH  # a name that looked like a reference but is not one: search instead
            else:
                note = self._amendment_note(draft.citations, turn.scope) if result.kind != "changes" else ""
                if note:
                    draft = draft.model_copy(update={"text": f"{draft.text.rstrip()}\n\n{note}\n"})
                yield AnswerEvent.delta(draft.text)
                if draft.citations:
                    yield AnswerEvent.sources(draft.citations)
                hits = [Hit(chunk=c, score=1.0) for c in result.chunks]
                yield AnswerEvent.done(self._answer_model(draft.text, route, trace, citations=draft.citations,
                                                          hits=hits, followups=draft.followups,
                                                          grounded=bool(draft.citations)))
                return

        async for event in self._search(turn, understood, trace, cacheable=cacheable, cache_index=cache_index):
            yield event

    async def _search(self, turn: Turn, understood: QueryUnderstanding, trace: TurnTrace, *,
                      cacheable: bool, cache_index: str = "") -> AsyncIterator[AnswerEvent]:
        enhanced, plan = understood.enhanced, understood.plan
        if understood.korean_query:
            trace.note(f"language: {understood.language} → {_short(understood.korean_query)}")
        trace.note(f"plan: {plan.strategy.value} {[_short(q) for q in plan.search_queries]}")
        if plan.hypothetical_answer:
            trace.note(f"hyde: {_short(plan.hypothetical_answer)}")
        status = framing_for(understood.language)
        yield AnswerEvent.status(status.STATUS_SEARCHING)
        wanted = self._retrieval_request(turn, understood)
        with trace.stage("retrieve"):
            result = await self.retrieval.run(wanted)
        hits = list(result.hits)
        parts = max(len(plan.sub_questions), 1)
        if not self.config.grade:
            trace.note("grade: off (REGBOT_ENABLE_SELF_RAG)")
            grade = GradeResult(passed=True, score=100.0, relevant=tuple(h.chunk.chunk_id for h in hits))
        else:
            grade = await self._timed(trace, "grade", self.stages.grader.run(enhanced.text, hits, parts=parts))
            trace.note(f"grade({grade.by}): {grade.score} passed={grade.passed} missing={list(grade.missing)}")
        rounds = 0
        # A round costs a rewrite and a grade; it starts only while the budget still pays for it and the answer.
        while not grade.passed and rounds < self.config.rewrite_rounds and trace.budget.remaining >= 3:
            rounds += 1
            yield AnswerEvent.status(status.STATUS_RESEARCHING)
            rewritten = await self._timed(trace, "rewrite", self.stages.rewriter.run(enhanced.text, grade.missing))
            trace.note(f"rewrite {rounds}: {rewritten}")
            with trace.stage("retrieve"):
                result = await self.retrieval.extend(result, rewritten, wanted)
            hits = list(result.hits)
            # Graded against the question the user asked, never against the rewrite.
            regrade = await self._timed(trace, "grade", self.stages.grader.run(enhanced.text, hits, parts=parts))
            trace.note(f"regrade({regrade.by}): {regrade.score} passed={regrade.passed} hedge={regrade.hedge}")
            # More evidence never makes a hedge a refusal: the closest article found so far is still in the hits.
            grade = regrade if regrade.passed or regrade.hedge or not grade.hedge else grade
        if not grade.passed and not grade.hedge:
            # A foreign question the glossary could not read has no words worth naming ("what", "does").
            unread = understood.language != "ko" and not understood.korean_query
            text = refusal_message(() if unread else grade.looked_for, hits,
                                   silent_on=() if unread else grade.silent_on, language=understood.language)
            # Nothing is quoted; the closest articles are offered as lookups, one tap away when the judge was wrong.
            nearest = about_articles(enhanced.text, related_chunks([h.chunk for h in hits], grade.looked_for),
                                     at_most=REFUSAL_NEAREST)
            yield AnswerEvent.delta(text)
            if nearest:
                yield AnswerEvent.followup_questions(nearest)
            yield AnswerEvent.done(self._answer_model(text, Route.SEARCH, trace, hits=hits, followups=nearest,
                                                      grounded=False))
            return
        hedged = not grade.passed
        if hedged:
            trace.note("hedge: the closest article, quoted as such")

        evidence = self._select_evidence(result, grade.relevant, turn.scope, trace)
        request = GenerationInput(question=enhanced.text, asked=enhanced.original if enhanced.used_history else "",
                                  sub_questions=plan.sub_questions,
                                  evidence=evidence.as_parts(lead=self.evidence.lead), answer_style=plan.answer_style,
                                  scope=turn.scope, language=understood.language,
                                  korean_query=understood.korean_query, topics=understood.topics)
        yield AnswerEvent.status(status.STATUS_WRITING)
        if hedged:
            yield AnswerEvent.delta(status.HEDGE_LEAD + "\n\n")
        generator = self.stages.generator
        streamed: list[str] = []
        notes: list[str] = []
        draft: DraftAnswer | None = None
        with trace.stage("generate"):
            try:
                async for event in generator.run(request):
                    if event.draft is not None:
                        draft = event.draft
                    elif event.kind == "status":  # the answer's LLM is consulting a tool
                        yield AnswerEvent.status(event.text)
                    else:
                        streamed.append(event.text)
                        yield AnswerEvent.delta(event.text)
            except LlmUnavailable as exc:
                log.warning("turn %s: generation interrupted: %s", turn.turn_id, exc)
                notes.append(status.STREAM_INTERRUPTED if streamed else status.OFFLINE_NOTE)
        if draft is None:  # a generator that broke off: keep what the user saw, uncited
            draft = DraftAnswer(text="".join(streamed), citations=())
        if draft.by != "llm":
            # A quoted answer needs no LLM verify or follow-ups call: the offline siblings judge quotes.
            trace.budget.close("the answer is quoted offline")
        if draft.note and draft.note not in notes:
            notes.append(draft.note)
            trace.note(f"generate: {draft.by} with note")
        text = draft.text if draft.text else "".join(streamed)
        if self.config.verify:
            yield AnswerEvent.status(status.STATUS_VERIFYING)
            verified = await self._timed(trace, "verify", self.stages.verifier.run(text, draft.citations))
        else:
            trace.note("verify: off (REGBOT_HALLUCINATION_CHECK)")
            verified = VerificationResult(text=text, supported=True)
        if not verified.supported and draft.by == "llm":
            trace.note(f"verify({verified.by}): {len(verified.removed)} unsupported sentence(s); revising once")
            revised = await self._timed(trace, "revise", generator.revise(request, draft, verified.removed))
            if revised is not None:
                draft = revised
                verified = await self._timed(trace, "verify", self.stages.verifier.run(draft.text, draft.citations))
        if not verified.supported:
            trace.note(f"verifier({verified.by}) removed {len(verified.removed)} sentence(s)")
            notes.append(status.UNVERIFIED_NOTE)
        answer_text = verified.text.rstrip()
        used = cited_indices(answer_text)
        if hedged:
            answer_text = status.HEDGE_LEAD + "\n\n" + answer_text
            notes.insert(0, status.HEDGE_ASK)
        citations = tuple(c for c in draft.citations if c.index in used) or draft.citations
        if self.stages.legal is not None:
            part = await self._timed(trace, "legal", self.stages.legal.run(enhanced.text, citations, turn.scope))
            if part is not None:
                trace.note(f"legal: {[c.label for c in part.citations]}")
                yield AnswerEvent.delta("\n\n" + part.render())
                answer_text += "\n\n" + part.render()
                citations += part.citations
        note = self._amendment_note(citations, turn.scope)
        if note:
            yield AnswerEvent.delta("\n\n" + note)
            answer_text += "\n\n" + note
        final_text = answer_text + ("\n\n" + "\n".join(notes) if notes else "")
        yield AnswerEvent.sources(citations)
        followups = await self._timed(trace, "followups", self.stages.followups.run(
            enhanced.text, hits, {c.chunk_id for c in citations}, proposed=draft.followups))
        if followups:
            yield AnswerEvent.followup_questions(followups)
        answer = self._answer_model(final_text, Route.SEARCH, trace, citations=citations, hits=hits,
                                    followups=followups, outcome=Outcome.HEDGED if hedged else None)
        if cacheable and not notes and citations:
            # Stored before `done`: a consumer may stop reading at `done`. Degraded answers are never stored.
            await self._cache_store(enhanced.original, turn.scope, answer, trace, cache_index)
        yield AnswerEvent.done(answer)

    def _amendment_note(self, citations: tuple[Citation, ...], scope: Scope) -> str:
        """A line for each quoted article amended lately (or about to be), or ""."""
        return self.stages.amendments.run(citations, scope) if self.stages.amendments is not None else ""

    @staticmethod
    def _retrieval_request(turn: Turn, understood: QueryUnderstanding) -> RetrievalRequest:
        """The plan's queries, typed by the part they serve. A follow-up the enhancer folded is searched as the
        user's own words, with what it leans on as lower-weight context."""
        enhanced, plan = understood.enhanced, understood.plan
        queries = planned_queries(plan.search_queries, plan.sub_questions)
        if enhanced.context and not plan.sub_questions:
            queries = planned_queries((enhanced.original,), ())
        return RetrievalRequest(queries=queries, parts=plan.sub_questions, context=enhanced.context,
                                scope=turn.scope)

    def _select_evidence(self, result: RetrievalResult, relevant: tuple[str, ...], scope: Scope,
                         trace: TurnTrace) -> Evidence:
        evidence = self.evidence.run(result, set(relevant), scope)
        added = sum(len(g.neighbours) for g in evidence.groups)
        if added:
            trace.note(f"evidence: {added} neighbour(s) added")
        return evidence

    async def _cache_lookup(self, question: str, scope: Scope, trace: TurnTrace, index: str) -> CacheMatch | None:
        assert self.stages.cache is not None
        try:
            with trace.stage("cache"):
                async with asyncio.timeout(self.config.cache_timeout_s):
                    return await self.stages.cache.lookup(question, scope, index=index)
        except TimeoutError:
            log.warning("answer cache lookup took longer than %s s; answering without it", self.config.cache_timeout_s)
            return None

    async def _cache_store(self, question: str, scope: Scope, answer: Answer, trace: TurnTrace, index: str) -> None:
        assert self.stages.cache is not None
        retrieved_ids = tuple(h.chunk.chunk_id for h in answer.retrieved)
        entry = CachedAnswer(question=question, text=answer.text, citations=answer.citations,
                             followups=answer.followups, retrieved_ids=retrieved_ids)
        try:
            with trace.stage("cache"):
                async with asyncio.timeout(self.config.cache_timeout_s):
                    await self.stages.cache.store(question, scope, entry, index=index)
        except TimeoutError:
            log.warning("answer cache store took longer than %s s; skipped", self.config.cache_timeout_s)

    def _replay(self, match: CacheMatch, trace: TurnTrace) -> list[AnswerEvent]:
        cached = match.answer
        trace.note(f"cache hit (similarity {match.similarity}): {_short(cached.question)}")
        hits = [Hit(chunk=chunk, score=0.0) for cid in cached.retrieved_ids
                if (chunk := self.retriever.get(cid)) is not None]
        events = [AnswerEvent.delta(cached.text)]
        if cached.citations:
            events.append(AnswerEvent.sources(cached.citations))
        if cached.followups:
            events.append(AnswerEvent.followup_questions(cached.followups))
        answer = self._answer_model(cached.text, Route.SEARCH, trace, citations=cached.citations, hits=hits,
                                    followups=cached.followups)
        events.append(AnswerEvent.done(answer.model_copy(update={"cache": "hit"})))
        return events

    def _answer_model(self, text: str, route: Route, trace: TurnTrace, *,
                      citations: tuple[Citation, ...] = (), hits: list[Hit] | None = None,
                      followups: tuple[str, ...] = (), grounded: bool = True,
                      outcome: Outcome | None = None) -> Answer:
        trace.timings_ms["total"] = round((time.perf_counter() - trace.started) * 1000, 2)
        return Answer(text=text, route=route, citations=citations, followups=followups, grounded=grounded,
                      outcome=outcome,
                      llm_calls=trace.llm_calls, timings_ms=dict(trace.timings_ms),
                      llm_tokens={stage: (u.input_tokens, u.output_tokens)
                                  for stage, u in trace.budget.by_stage.items()},
                      llm_breaker=str(getattr(self.stages.llm, "breaker_state", "")),
                      retrieved=tuple(hits or ()), notes=tuple(trace.notes),
                      cache="miss" if "cache" in trace.timings_ms else "off")


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
