"""AnswerPipeline: understand (enhance → route → plan), then the route's steps, emitted as a stream of
AnswerEvents. It only calls stages in order; the search route's steps are declared in `SEARCH_STEPS` and read top
to bottom:

    retrieve (and grade) → research (rewrite while the grade fails) → refuse (nothing close) → write → verify
      → supplement (관련 법령, amendment notes) → suggest (follow-ups)

Each step reads and fills one `SearchState`: what a later step needs (the grade, the draft and whether it was
quoted offline) travels there, not through a side channel. Each turn runs inside its own `LlmCallBudget`, so
`Answer.llm_calls` counts what the LLM stages spent; every non-streaming stage is bounded by
`PipelineConfig.stage_timeout_s`, and the whole answer by `answer_deadline_s`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from rag.errors import LlmUnavailable, RetrievalUnavailable
from rag.lang import detect_language, framing_for
from rag.llm import LlmCallBudget, llm_call_budget
from rag.models import Answer, AnswerEvent, Citation, Hit, Message, Outcome, Route, Scope, Turn, cited_indices
from rag.retrieval.planned import (
    EvidenceSelector,
    PlannedRetrieval,
    RetrievalRequest,
    planned_queries,
)
from rag.retrieval.retriever import Retriever
from rag.search_state import SearchState
from rag.stages.contracts import DraftAnswer, GenerationInput, GradeResult, QueryUnderstanding, VerificationResult
from rag.stages.factory import PipelineStages
from rag.stages.followups import about_articles
from rag.stages.refusal import refusal_message, related_chunks, silent_topics
from rag.stages.router import OFF_TOPIC
from rag.text import normalize_text
from rag.trace import TurnTrace, short
from rag.turn_cache import TurnCache

log = logging.getLogger(__name__)

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


SearchStep = Callable[[SearchState, TurnTrace], AsyncIterator[AnswerEvent]]


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
        self.cache = TurnCache(stages.cache, get=retriever.get, timeout_s=self.config.cache_timeout_s) \
            if stages.cache is not None else None

    @property
    def search_steps(self) -> tuple[SearchStep, ...]:
        """The search route, in order; a step that sets `state.answer` ends it."""
        return (self._retrieve, self._research, self._refuse, self._write, self._verify,
                self._supplement, self._suggest)

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        trace = TurnTrace(budget=LlmCallBudget(self.config.max_llm_calls), stage_timeout_s=self.config.stage_timeout_s)
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

    async def _answer(self, turn: Turn, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        question = normalize_text(turn.text).strip()
        # Status lines in the asker's language (rag/lang); the understanding decides it again with the glossary.
        language = detect_language(question)
        yield AnswerEvent.status(framing_for(language).STATUS_UNDERSTANDING)
        if self.stages.amendments is not None:
            self.stages.amendments.keep_current()  # a held version whose date has come is answered from today
        # Only Korean answers are cached: e5 finds an English question close to its Korean twin, whose cached answer
        # is framed in the other language.
        cache = self.cache if not turn.history and turn.force_route is None and language == "ko" else None
        # The index the turn starts on: its answer is stored under it even if an ingest lands meanwhile.
        cache_index = cache.cache.index_identity() if cache is not None else ""
        if cache is not None:
            match = await cache.lookup(question, turn.scope, trace, cache_index)
            if match is not None:
                for event in cache.replay(match, trace, llm=self.stages.llm):
                    yield event
                return
        understood = await trace.timed("understand",
                                       self.stages.understander.run(question, turn.history, forced=turn.force_route))
        trace.language = understood.language
        if understood.enhanced.used_history:
            trace.note(f"enhanced with history: {understood.enhanced.text}")
        route = understood.decision.route
        trace.note(f"route: {route.value}" + (f" ({understood.by})" if understood.by != "offline" else ""))
        # The understanding decided the route: small talk, a lookup (which may fall back to a search when it finds
        # nothing exact), or a search.
        if route == Route.CHITCHAT:
            for event in self._chitchat(question, understood, trace):
                yield event
            return
        if route == Route.LOOKUP:
            if understood.lookup_query != question:
                trace.note(f"lookup from the conversation: {understood.lookup_query}")
            yield AnswerEvent.status(framing_for(understood.language).STATUS_LOOKUP)
            found = await self._lookup(turn, understood, trace)
            if found is not None:
                for event in found:
                    yield event
                return
        state = SearchState(turn=turn, understood=understood, said=framing_for(understood.language))
        for step in self.search_steps:
            async for event in step(state, trace):
                yield event
            if state.answer is not None:
                break
        assert state.answer is not None
        if cache is not None and not state.notes and state.answer.citations:
            # Stored before `done`: a consumer may stop reading at `done`. Degraded answers are never stored.
            await cache.store(understood.enhanced.original, turn.scope, state.answer, trace, cache_index)
        yield AnswerEvent.done(state.answer)

    def _chitchat(self, question: str, understood: QueryUnderstanding, trace: TurnTrace) -> list[AnswerEvent]:
        kind = understood.decision.chitchat_kind
        text = self.stages.smalltalk.reply(kind, question, language=understood.language)
        # A question the bot cannot answer is declined: a refusal, not a chat.
        answer = trace.answer(text, Route.CHITCHAT, llm=self.stages.llm, grounded=kind != OFF_TOPIC)
        return [AnswerEvent.delta(text), AnswerEvent.done(answer)]

    async def _lookup(self, turn: Turn, understood: QueryUnderstanding, trace: TurnTrace) -> list[AnswerEvent] | None:
        """The structural view's events, or None when a reference-like name found nothing exact and the
        understanding lets such a lookup be searched instead."""
        draft, result = await trace.timed("lookup", self.stages.structural.run(understood.lookup_query, turn.scope))
        if result.kind in ("not_found", "ambiguous") and not result.exact and understood.search_if_not_found:
            return None
        note = self._amendment_note(draft.citations, turn.scope) if result.kind != "changes" else ""
        if note:
            draft = draft.model_copy(update={"text": f"{draft.text.rstrip()}\n\n{note}\n"})
        events = [AnswerEvent.delta(draft.text)]
        if draft.citations:
            events.append(AnswerEvent.sources(draft.citations))
        hits = [Hit(chunk=c, score=1.0) for c in result.chunks]
        events.append(AnswerEvent.done(trace.answer(draft.text, Route.LOOKUP, llm=self.stages.llm,
                                                    citations=draft.citations, hits=hits, followups=draft.followups,
                                                    grounded=bool(draft.citations))))
        return events

    # --- the search route's steps (`search_steps`) ------------------------------------------------------------------

    async def _retrieve(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """The plan's queries, searched, and the hits graded."""
        understood, plan = state.understood, state.understood.plan
        if understood.korean_query:
            trace.note(f"language: {understood.language} → {short(understood.korean_query)}")
        trace.note(f"plan: {plan.strategy.value} {[short(q) for q in plan.search_queries]}")
        if plan.hypothetical_answer:
            trace.note(f"hyde: {short(plan.hypothetical_answer)}")
        yield AnswerEvent.status(state.said.STATUS_SEARCHING)
        state.wanted = retrieval_request(state.turn, understood)
        with trace.stage("retrieve"):
            state.result = await self.retrieval.run(state.wanted)
        await self._grade(state, trace)

    async def _grade(self, state: SearchState, trace: TurnTrace) -> None:
        """Whether the hits answer the question (passed), come close (hedge) or not."""
        if not self.config.grade:
            trace.note("grade: off (REGBOT_ENABLE_SELF_RAG)")
            state.grade = GradeResult(passed=True, score=100.0, relevant=tuple(h.chunk.chunk_id for h in state.hits))
            return
        state.grade = grade = await trace.timed("grade", self.stages.grader.run(state.question, state.hits,
                                                                                parts=state.parts, asked=state.asked))
        trace.note(f"grade({grade.by}): {grade.score} passed={grade.passed} missing={list(grade.missing)}")

    async def _research(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """Rewrite-and-search rounds while the grade fails; a round starts only while the budget still pays for
        it (a rewrite and a grade) and the answer. A hedge the LLM judged is answered as it is: its round would
        cost two of the three calls the common path has (understand, grade, answer). An offline hedge still gets
        its round, which costs no call and whose further search often ranks the answering article higher."""
        assert state.grade is not None and state.result is not None and state.wanted is not None
        rounds = 0
        while worth_a_round(state.grade) and rounds < self.config.rewrite_rounds and trace.budget.remaining >= 3:
            rounds += 1
            yield AnswerEvent.status(state.said.STATUS_RESEARCHING)
            rewritten = await trace.timed("rewrite", self.stages.rewriter.run(state.question, state.grade.missing))
            trace.note(f"rewrite {rounds}: {rewritten}")
            with trace.stage("retrieve"):
                state.result = await self.retrieval.extend(state.result, rewritten, state.wanted)
            # Graded against the question the user asked, never against the rewrite.
            regrade = await trace.timed("grade", self.stages.grader.run(state.question, state.hits,
                                                                         parts=state.parts, asked=state.asked))
            trace.note(f"regrade({regrade.by}): {regrade.score} passed={regrade.passed} hedge={regrade.hedge}")
            # More evidence never makes a hedge a refusal: the closest article found so far is still in the hits.
            grade = state.grade
            state.grade = regrade if regrade.passed or regrade.hedge or not grade.hedge else grade

    async def _refuse(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """Nothing close: say what the regulations are silent on; quote nothing, offer the closest articles."""
        grade, understood, hits = state.grade, state.understood, state.hits
        assert grade is not None
        if grade.passed or grade.hedge:
            if not grade.passed:
                trace.note("hedge: the closest article, quoted as such")
            return
        if understood.language != "ko":
            # Named in the asker's words (the glossary's topics), not the statutes' Korean ones; a question the
            # glossary could not read has no words worth naming ("what", "does").
            silent = silent_topics(understood.topics, understood.topic_words, grade.silent_on)
            text = refusal_message(understood.topics, hits, silent_on=silent, language=understood.language)
        else:
            text = refusal_message(grade.looked_for, hits, silent_on=grade.silent_on)
        # Nothing is quoted; the closest articles are offered as lookups, one tap away when the judge was wrong.
        nearest = about_articles(state.question, related_chunks([h.chunk for h in hits], grade.looked_for),
                                 at_most=REFUSAL_NEAREST)
        yield AnswerEvent.delta(text)
        if nearest:
            yield AnswerEvent.followup_questions(nearest)
        state.answer = trace.answer(text, Route.SEARCH, llm=self.stages.llm, hits=hits, followups=nearest,
                                    grounded=False)

    async def _write(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """The answer, streamed from the evidence (the hits the grade found relevant, with their neighbours)."""
        assert state.result is not None and state.grade is not None
        understood, plan, said = state.understood, state.understood.plan, state.said
        evidence = self.evidence.run(state.result, set(state.grade.relevant), state.turn.scope)
        added = sum(len(g.neighbours) for g in evidence.groups)
        if added:
            trace.note(f"evidence: {added} neighbour(s) added")
        enhanced = understood.enhanced
        state.request = GenerationInput(
            question=enhanced.text, asked=enhanced.original if enhanced.used_history else "",
            sub_questions=plan.sub_questions, evidence=evidence.as_parts(lead=self.evidence.lead),
            answer_style=plan.answer_style, scope=state.turn.scope, language=understood.language,
            korean_query=understood.korean_query, topics=understood.topics, facets=understood.facets)
        yield AnswerEvent.status(said.STATUS_WRITING)
        if state.hedged:
            yield AnswerEvent.delta(said.HEDGE_LEAD + "\n\n")
        streamed: list[str] = []
        with trace.stage("generate"):
            try:
                async for event in self.stages.generator.run(state.request):
                    if event.draft is not None:
                        state.draft = event.draft
                    elif event.kind == "status":  # the answer's LLM is consulting a tool
                        yield AnswerEvent.status(event.text)
                    else:
                        streamed.append(event.text)
                        yield AnswerEvent.delta(event.text)
            except LlmUnavailable as exc:
                log.warning("turn %s: generation interrupted: %s", state.turn.turn_id, exc)
                state.notes.append(said.STREAM_INTERRUPTED if streamed else said.OFFLINE_NOTE)
        if state.draft is None:  # a generator that broke off: keep what the user saw, uncited
            state.draft = DraftAnswer(text="".join(streamed), citations=())
        if state.draft.note and state.draft.note not in state.notes:
            state.notes.append(state.draft.note)
            trace.note(f"generate: {state.draft.by} with note")
        state.text = state.draft.text if state.draft.text else "".join(streamed)

    async def _verify(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """The cited sentences checked against their articles; an LLM draft is revised once when some fail."""
        draft, said = state.draft, state.said
        assert draft is not None and state.request is not None
        if self.config.verify:
            yield AnswerEvent.status(said.STATUS_VERIFYING)
            verified = await trace.timed("verify", self.stages.verifier.run(state.text, draft.citations,
                                                                             quoted=state.quoted_offline))
        else:
            trace.note("verify: off (REGBOT_HALLUCINATION_CHECK)")
            verified = VerificationResult(text=state.text, supported=True)
        if not verified.supported and draft.by == "llm":
            trace.note(f"verify({verified.by}): {len(verified.removed)} unsupported sentence(s); revising once")
            revised = await trace.timed("revise", self.stages.generator.revise(state.request, draft, verified.removed))
            if revised is not None:
                state.draft = draft = revised
                verified = await trace.timed("verify", self.stages.verifier.run(draft.text, draft.citations))
        if not verified.supported:
            trace.note(f"verifier({verified.by}) removed {len(verified.removed)} sentence(s)")
            state.notes.append(said.UNVERIFIED_NOTE)
        state.verified = verified
        state.text = verified.text.rstrip()
        used = cited_indices(state.text)
        if state.hedged:
            state.text = said.HEDGE_LEAD + "\n\n" + state.text
            state.notes.insert(0, said.HEDGE_ASK)
        state.citations = tuple(c for c in draft.citations if c.index in used) or draft.citations

    async def _supplement(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """The "관련 법령" part and the notes on quoted articles amended lately, after the answer."""
        scope = state.turn.scope
        if self.stages.legal is not None:
            part = await trace.timed("legal", self.stages.legal.run(state.question, state.citations, scope))
            if part is not None:
                trace.note(f"legal: {[c.label for c in part.citations]}")
                yield AnswerEvent.delta("\n\n" + part.render())
                state.text += "\n\n" + part.render()
                state.citations += part.citations
        note = self._amendment_note(state.citations, scope)
        if note:
            yield AnswerEvent.delta("\n\n" + note)
            state.text += "\n\n" + note

    async def _suggest(self, state: SearchState, trace: TurnTrace) -> AsyncIterator[AnswerEvent]:
        """Sources, then follow-up questions; the answer is complete."""
        assert state.draft is not None
        final_text = state.text + ("\n\n" + "\n".join(state.notes) if state.notes else "")
        yield AnswerEvent.sources(state.citations)
        followups = await trace.timed("followups", self.stages.followups.run(
            state.question, state.hits, {c.chunk_id for c in state.citations}, proposed=state.draft.followups,
            quoted=state.quoted_offline))
        if followups:
            yield AnswerEvent.followup_questions(followups)
        state.answer = trace.answer(final_text, Route.SEARCH, llm=self.stages.llm, citations=state.citations,
                                    hits=state.hits, followups=followups,
                                    outcome=Outcome.HEDGED if state.hedged else None)

    # --- helpers ----------------------------------------------------------------------------------------------------

    def _amendment_note(self, citations: tuple[Citation, ...], scope: Scope) -> str:
        """A line for each quoted article amended lately (or about to be), or ""."""
        return self.stages.amendments.run(citations, scope) if self.stages.amendments is not None else ""


def worth_a_round(grade: GradeResult) -> bool:
    """Whether a grade calls for a rewrite-and-search round: it fails outright, or it is a hedge judged offline."""
    return not grade.passed and (not grade.hedge or grade.by == "offline")


def retrieval_request(turn: Turn, understood: QueryUnderstanding) -> RetrievalRequest:
    """The plan's queries, typed by the part they serve. A follow-up the enhancer folded is searched as the user's
    own words, with what it leans on as lower-weight context."""
    enhanced, plan = understood.enhanced, understood.plan
    queries = planned_queries(plan.search_queries, plan.sub_questions)
    if enhanced.context and not plan.sub_questions:
        queries = planned_queries((enhanced.original,), ())
    return RetrievalRequest(queries=queries, parts=plan.sub_questions, context=enhanced.context, scope=turn.scope)


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
