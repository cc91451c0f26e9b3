"""AnswerPipeline with fake stages: event order, the per-turn LLM budget, rewrite and revise loops, timeouts, cache."""

from __future__ import annotations

import asyncio

import pytest

from rag import messages
from rag.cache import MemoryCacheBackend, SemanticAnswerCache
from rag.llm import LlmStreamInterrupted, current_llm_call_budget
from rag.models import AnswerEventKind, Chunk, Citation, Hit, Message, Outcome, Role, Route, Scope
from rag.pipeline import AnswerPipeline, PipelineConfig, collect
from rag.stages.contracts import (
    DraftAnswer,
    EnhancedQuery,
    GenerationEvent,
    GradeResult,
    QueryPlan,
    QueryUnderstanding,
    RouteDecision,
    VerificationResult,
)
from rag.stages.factory import PipelineStages

QUESTION = "입사 1년 지나면 연차 며칠 받아?"
ANSWER = "1년간 80퍼센트 이상 출근하면 15일이에요 [1]."


def make_chunk(doc="취업규칙", article="제20조", title="연차유급휴가", text="제20조 (연차유급휴가)\n① 15일을 준다."):
    return Chunk(chunk_id=f"{doc}:{article}", doc=doc, article=article, title=title, text=text)


def spend_llm_calls(count: int) -> None:
    """What an LLM stage does through ResilientProvider: spend from the turn's budget."""
    budget = current_llm_call_budget()
    for _ in range(count):
        budget.spend()


class FakeRetriever:
    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.queries: list[str] = []
        self.corpus = self

    def get(self, chunk_id: str) -> Chunk | None:
        return next((h.chunk for h in self.hits if h.chunk.chunk_id == chunk_id), None)

    async def search(self, query, *, k=10, scope=None, context=""):
        self.queries.append(query)
        return list(self.hits)

    async def search_many(self, queries, *, k=10, scope=None, context=""):
        return [await self.search(q, k=k, scope=scope, context=context) for q in queries]


class FakeUnderstander:
    def __init__(self, route=Route.SEARCH, llm_calls=1, block: asyncio.Event | None = None) -> None:
        self.route, self.llm_calls, self.block = route, llm_calls, block

    async def run(self, question, history, *, forced=None):
        if self.block is not None:
            await self.block.wait()
        spend_llm_calls(self.llm_calls)
        return QueryUnderstanding(enhanced=EnhancedQuery(text=question, original=question),
                                  decision=RouteDecision(route=self.route, chitchat_kind="greeting"),
                                  plan=QueryPlan(intent=question, search_queries=(question,)), lookup_query=question,
                                  by="llm")


class FakeGrader:
    def __init__(self, *results: GradeResult) -> None:
        self.results = list(results)
        self.questions: list[str] = []

    async def run(self, question, hits, *, parts=1, asked=""):
        self.questions.append(question)
        spend_llm_calls(1)
        return self.results.pop(0)


class FakeRewriter:
    async def run(self, question, missing):
        return "연차유급휴가 " + " ".join(missing)


class FakeGenerator:
    def __init__(self, pieces, draft: DraftAnswer, revised: DraftAnswer | None = None, error=None) -> None:
        self.pieces, self.draft, self.revised, self.error = pieces, draft, revised, error
        self.revisions: list[tuple[str, ...]] = []

    async def run(self, request):
        spend_llm_calls(1)
        for piece in self.pieces:
            yield GenerationEvent.delta(piece)
        if self.error is not None:
            raise self.error
        yield GenerationEvent.done(self.draft)

    async def revise(self, request, draft, unsupported):
        self.revisions.append(unsupported)
        return self.revised


class FakeVerifier:
    def __init__(self, *results: VerificationResult) -> None:
        self.results = list(results)
        self.texts: list[str] = []

    async def run(self, text, citations, *, quoted=False):
        self.texts.append(text)
        return self.results.pop(0) if self.results else VerificationResult(text=text, supported=True)


class FakeFollowups:
    async def run(self, question, hits, cited_chunk_ids, proposed=(), *, quoted=False):
        return proposed or ("반차도 쓸 수 있어?",)


CITATION = Citation(index=1, doc="취업규칙", article="제20조", paragraph="①", chunk_id="취업규칙:제20조")
PASS = GradeResult(passed=True, score=90, relevant=("취업규칙:제20조",), by="llm")


def llm_draft(text=ANSWER, note=""):
    return DraftAnswer(text=text, citations=(CITATION,), followups=("3년이면 더 받아?",), note=note, by="llm")


def build(*, understander=None, grader=None, generator=None, verifier=None, cache=None, config=None,
          retriever=None):
    stages = PipelineStages(
        understander=understander or FakeUnderstander(), grader=grader or FakeGrader(PASS),
        rewriter=FakeRewriter(), generator=generator or FakeGenerator([ANSWER], llm_draft()),
        verifier=verifier or FakeVerifier(), followups=FakeFollowups(), structural=None, cache=cache)
    return AnswerPipeline(stages=stages, retriever=retriever or FakeRetriever([Hit(chunk=make_chunk(), score=1.0)]),
                          config=config)


async def test_a_search_answer_streams_then_cites_then_suggests_then_ends():
    answer, events = await collect(build(), QUESTION)
    kinds = [e.kind for e in events]
    assert kinds[-5:] == [AnswerEventKind.DELTA, AnswerEventKind.STATUS, AnswerEventKind.SOURCES,
                          AnswerEventKind.FOLLOWUPS, AnswerEventKind.DONE]
    assert [e.text for e in events if e.kind == AnswerEventKind.STATUS] == [
        messages.STATUS_UNDERSTANDING, messages.STATUS_SEARCHING, messages.STATUS_WRITING, messages.STATUS_VERIFYING]
    assert answer.text == ANSWER
    assert [c.label for c in answer.citations] == ["취업규칙 제20조 제1항"]
    assert answer.followups == ("3년이면 더 받아?",)


async def test_llm_calls_count_what_the_stages_spent_in_this_turn_only():
    pipeline = build(grader=FakeGrader(PASS, PASS))
    first, _ = await collect(pipeline, QUESTION)
    second, _ = await collect(pipeline, QUESTION)
    assert (first.llm_calls, second.llm_calls) == (3, 3)  # understand + grade + generate, each turn afresh


async def test_a_failed_grade_rewrites_once_and_regrades_the_original_question():
    grader = FakeGrader(GradeResult(passed=False, score=40, missing=("가산휴가",), by="llm"), PASS)
    retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
    answer, events = await collect(build(grader=grader, retriever=retriever), QUESTION)
    assert retriever.queries == [QUESTION, "연차유급휴가 가산휴가"]
    assert grader.questions == [QUESTION, QUESTION]
    assert messages.STATUS_RESEARCHING in [e.text for e in events]
    assert "rewrite 1: 연차유급휴가 가산휴가" in answer.notes


async def test_a_second_failed_grade_says_the_regulations_do_not_cover_it():
    failed = GradeResult(passed=False, score=10, missing=("카페",), by="llm")
    answer, _ = await collect(build(grader=FakeGrader(failed, failed)), "사내 카페는 저녁 몇 시에 문을 닫아?")
    assert answer.text == messages.NOT_FOUND
    assert not answer.grounded


async def test_a_refusal_names_what_was_looked_for_and_the_closest_regulation_but_quotes_nothing():
    failed = GradeResult(passed=False, score=10, missing=("카페 운영 시간",), looked_for=("카페", "사내", "열다"),
                         silent_on=("카페", "열다"), by="llm")
    answer, events = await collect(build(grader=FakeGrader(failed, failed)), "사내 카페는 저녁 몇 시에 문을 닫아?")
    assert answer.text.startswith(messages.NOT_COVERED.format(looked_for="'카페'"))  # 사내 is in the regulations
    assert "「취업규칙」" in answer.text and "15일을 준다" not in answer.text
    assert answer.citations == () and not [e for e in events if e.kind == AnswerEventKind.SOURCES]
    # The closest article (연차) holds none of the question's nouns but 사내: it is not offered as a button.
    assert answer.followups == () and not answer.grounded
    assert not [e for e in events if e.kind == AnswerEventKind.FOLLOWUPS]


async def test_a_middling_grade_quotes_the_closest_article_as_such_and_says_whom_to_ask():
    hedge = GradeResult(passed=False, hedge=True, score=50, missing=("가산휴가",), relevant=("취업규칙:제20조",),
                        by="offline")
    answer, events = await collect(build(grader=FakeGrader(hedge, hedge)), QUESTION)
    assert answer.outcome == Outcome.HEDGED and answer.grounded
    assert answer.text.startswith(messages.HEDGE_LEAD) and ANSWER in answer.text
    assert "1350" in answer.text and "인사팀" in answer.text
    streamed = "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA)
    assert streamed.startswith(messages.HEDGE_LEAD)
    assert [c.label for c in answer.citations] == ["취업규칙 제20조 제1항"]


async def test_a_regrade_below_a_hedge_keeps_the_hedge_and_one_above_it_answers():
    hedge = GradeResult(passed=False, hedge=True, score=50, relevant=("취업규칙:제20조",), by="offline")
    failed = GradeResult(passed=False, score=10, by="offline")
    kept, _ = await collect(build(grader=FakeGrader(hedge, failed)), QUESTION)
    answered, _ = await collect(build(grader=FakeGrader(hedge, PASS)), QUESTION)
    assert (kept.outcome, answered.outcome) == (Outcome.HEDGED, Outcome.ANSWERED)
    assert not answered.text.startswith(messages.HEDGE_LEAD)


async def test_a_hedge_the_llm_judged_is_answered_without_a_rewrite_round():
    # Its round would cost a rewrite and a regrade: two more LLM calls than the common path's three.
    hedge = GradeResult(passed=False, hedge=True, score=50, relevant=("취업규칙:제20조",), by="llm")
    answer, events = await collect(build(grader=FakeGrader(hedge, PASS)), QUESTION)
    assert answer.outcome == Outcome.HEDGED and answer.text.startswith(messages.HEDGE_LEAD)
    assert not [n for n in answer.notes if n.startswith(("rewrite", "regrade"))]
    assert messages.STATUS_RESEARCHING not in [e.text for e in events if e.kind == AnswerEventKind.STATUS]


async def test_a_failed_grade_that_regrades_as_a_hedge_quotes_the_closest_article():
    failed = GradeResult(passed=False, score=10, by="offline")
    hedge = GradeResult(passed=False, hedge=True, score=50, relevant=("취업규칙:제20조",), by="offline")
    answer, _ = await collect(build(grader=FakeGrader(failed, hedge)), QUESTION)
    assert answer.outcome == Outcome.HEDGED and "rewrite 1: " in " ".join(answer.notes)


async def test_a_refusal_is_the_refused_outcome():
    failed = GradeResult(passed=False, score=10, missing=("카페",), by="offline")
    answer, _ = await collect(build(grader=FakeGrader(failed, failed)), "사내 카페는 몇 시까지 열어?")
    assert answer.outcome == Outcome.REFUSED


@pytest.mark.parametrize(("kind", "reply", "grounded"), [("goodbye", messages.CHITCHAT_GOODBYE, True),
                                                         ("pause", messages.CHITCHAT_PAUSE, True),
                                                         ("off_topic", messages.CHITCHAT_OFF_TOPIC, False)])
async def test_small_talk_gets_the_reply_of_its_kind_without_retrieval(kind, reply, grounded):
    """A question no regulation holds ("주말 날씨 어때?") is declined: the answer counts as a refusal."""
    class KindUnderstander(FakeUnderstander):
        async def run(self, question, history, *, forced=None):
            understood = await super().run(question, history, forced=forced)
            return understood.model_copy(update={"decision": RouteDecision(route=Route.CHITCHAT, chitchat_kind=kind)})

    retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
    answer, _ = await collect(build(understander=KindUnderstander(llm_calls=0), retriever=retriever), "잠깐만")
    assert (answer.text, answer.route, retriever.queries, answer.grounded) == (reply, Route.CHITCHAT, [], grounded)


async def test_an_unsupported_claim_is_revised_once_and_the_revision_is_final():
    bad = "연차는 25일이에요 [1]."
    generator = FakeGenerator([bad], llm_draft(bad), revised=llm_draft(ANSWER))
    verifier = FakeVerifier(VerificationResult(text="", supported=False, removed=(bad,), by="llm"))
    answer, events = await collect(build(generator=generator, verifier=verifier), QUESTION)
    assert generator.revisions == [(bad,)]
    assert verifier.texts == [bad, ANSWER]
    assert answer.text == ANSWER
    assert "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA) == bad  # adapters replace it


async def test_without_a_revision_the_unsupported_claim_is_removed_with_a_note():
    text = f"{ANSWER}\n연차는 25일까지 당겨 쓸 수 있어요 [1]."
    generator = FakeGenerator([text], llm_draft(text), revised=None)
    verifier = FakeVerifier(VerificationResult(text=ANSWER, supported=False, removed=("연차는 25일…",), by="llm"))
    answer, _ = await collect(build(generator=generator, verifier=verifier), QUESTION)
    assert answer.text == f"{ANSWER}\n\n{messages.UNVERIFIED_NOTE}"


async def test_a_generator_note_reaches_the_final_answer():
    generator = FakeGenerator(["인용"], llm_draft("관련 규정은 … [1]\n", note=messages.OFFLINE_NOTE))
    answer, _ = await collect(build(generator=generator), QUESTION)
    assert answer.text.endswith(messages.OFFLINE_NOTE)


async def test_a_stream_that_raises_after_text_keeps_it_with_a_note():
    generator = FakeGenerator(["연차는 "], llm_draft("연차는"), error=LlmStreamInterrupted("연차는 ", "reset"))
    answer, _ = await collect(build(generator=generator), QUESTION)
    assert answer.text == f"연차는\n\n{messages.STREAM_INTERRUPTED}"


async def test_a_stage_over_its_timeout_ends_the_turn_with_a_message():
    never = asyncio.Event()
    pipeline = build(understander=FakeUnderstander(block=never), config=PipelineConfig(stage_timeout_s=0.05))
    answer, events = await collect(pipeline, QUESTION)
    assert answer is None
    assert events[-1].kind == AnswerEventKind.ERROR and events[-1].text == messages.TIMEOUT


async def test_chitchat_spends_only_the_understanding_call():
    answer, _ = await collect(build(understander=FakeUnderstander(route=Route.CHITCHAT, llm_calls=0)), "안녕")
    assert (answer.text, answer.llm_calls) == (messages.CHITCHAT_GREETING, 0)


class TestAnswerCache:
    @pytest.fixture
    def cache(self):
        return SemanticAnswerCache(MemoryCacheBackend(), index_version=lambda: 1)

    async def test_a_repeated_question_is_answered_from_the_cache(self, cache):
        retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
        pipeline = build(cache=cache, retriever=retriever)
        first, _ = await collect(pipeline, QUESTION)
        again, events = await collect(pipeline, "입사 1년 지나면 연차 며칠 받아")
        assert retriever.queries == [QUESTION]
        assert (again.text, again.citations, again.followups) == (first.text, first.citations, first.followups)
        assert again.llm_calls == 0
        assert [h.chunk.label for h in again.retrieved] == ["취업규칙 제20조"]
        assert any(n.startswith("cache hit") for n in again.notes)
        assert [e.kind for e in events][-3:] == [AnswerEventKind.SOURCES, AnswerEventKind.FOLLOWUPS,
                                                 AnswerEventKind.DONE]

    async def test_a_degraded_answer_is_not_stored(self, cache):
        generator = FakeGenerator(["인용"], llm_draft("관련 규정은 … [1]\n", note=messages.OFFLINE_NOTE))
        await collect(build(cache=cache, generator=generator), QUESTION)
        assert await cache.lookup(QUESTION, Scope()) is None

    async def test_a_question_with_history_bypasses_the_cache(self, cache):
        retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
        pipeline = build(cache=cache, retriever=retriever)
        history = (Message(role=Role.USER, content="연차 알려줘"), Message(role=Role.ASSISTANT, content="…"))
        await collect(pipeline, QUESTION, history=history)
        assert await cache.lookup(QUESTION, Scope()) is None


class TestOperatorSwitches:
    """REGBOT_ENABLE_SELF_RAG, REGBOT_REWRITE_ROUNDS and REGBOT_HALLUCINATION_CHECK, each on and off."""

    async def test_self_rag_off_answers_without_grading(self):
        grader = FakeGrader(GradeResult(passed=False, score=10, missing=("카페",), by="llm"))
        answer, _ = await collect(build(grader=grader, config=PipelineConfig(grade=False)), QUESTION)
        assert grader.questions == [] and answer.text == ANSWER and "grade" not in answer.timings_ms

    async def test_self_rag_on_grades_and_can_refuse(self):
        failed = GradeResult(passed=False, score=10, missing=("카페",), by="llm")
        grader = FakeGrader(failed, failed)
        answer, _ = await collect(build(grader=grader, config=PipelineConfig(grade=True)), QUESTION)
        assert grader.questions == [QUESTION, QUESTION] and not answer.grounded

    @pytest.mark.parametrize(("rounds", "searches"), [(0, 1), (1, 2), (3, 4)])
    async def test_rewrite_rounds_run_while_the_grade_fails(self, rounds, searches):
        failed = GradeResult(passed=False, score=10, missing=("가산휴가",), by="offline")
        grader = FakeGrader(*[failed] * (rounds + 1))
        retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
        config = PipelineConfig(rewrite_rounds=rounds, max_llm_calls=20)
        await collect(build(grader=grader, retriever=retriever, config=config), QUESTION)
        assert len(retriever.queries) == searches

    async def test_rewrite_rounds_stop_when_the_budget_cannot_pay_for_another_and_the_answer(self):
        failed = GradeResult(passed=False, score=10, missing=("가산휴가",), by="llm")
        retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
        config = PipelineConfig(rewrite_rounds=3, max_llm_calls=5)
        answer, _ = await collect(build(grader=FakeGrader(failed, failed, failed, failed), retriever=retriever,
                                        config=config), QUESTION)
        # understand 1 + grade 1 leave 3: one round (grade 1 more, as the fake rewriter spends none), then 2 left.
        assert len(retriever.queries) == 2 and answer.llm_calls <= 5

    @pytest.mark.parametrize("check", [True, False])
    async def test_hallucination_check_on_verifies_off_does_not(self, check):
        verifier = FakeVerifier()
        answer, events = await collect(build(verifier=verifier, config=PipelineConfig(verify=check)), QUESTION)
        assert (verifier.texts == [ANSWER]) is check
        assert (messages.STATUS_VERIFYING in [e.text for e in events]) is check
        assert answer.text == ANSWER
