"""ResilientProvider, CircuitBreaker, RetryPolicy and LlmCallBudget over a scripted fake provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from rag.llm import (
    CircuitBreaker,
    LlmBudgetExhausted,
    LlmCallBudget,
    LlmOutputInvalid,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
    LlmStreamInterrupted,
    LlmUnavailable,
    ResilientProvider,
    RetryPolicy,
    current_llm_call_budget,
    llm_call_budget,
)

HANG = "hang"  # a scripted step: never answer


class ScriptedProvider:
    """A fake provider that plays one scripted step per attempt.

    A step is an LlmResponse to return, an exception to raise, HANG, or (for streams) a list of
    deltas optionally ending in an exception or HANG.
    """

    name = "scripted"
    available = True

    def __init__(self, *steps: object) -> None:
        self._steps = list(steps)
        self.attempts = 0
        self.closed_streams = 0

    def _next_step(self) -> object:
        self.attempts += 1
        return self._steps.pop(0)

    async def complete(self, request: LlmRequest) -> LlmResponse:
        step = self._next_step()
        if step == HANG:
            await asyncio.Event().wait()
        if isinstance(step, Exception):
            raise step
        assert isinstance(step, LlmResponse)
        return step

    def stream(self, request: LlmRequest) -> LlmStream:
        return LlmStream(self._events(self._next_step()))

    async def _events(self, step: object) -> AsyncIterator[str | LlmResponse]:
        try:
            if isinstance(step, Exception):
                raise step
            assert isinstance(step, list)
            for item in step:
                if item == HANG:
                    await asyncio.Event().wait()
                if isinstance(item, Exception):
                    raise item
                yield item
            yield LlmResponse(text="".join(step), input_tokens=10, output_tokens=len(step), model="m")
        finally:
            self.closed_streams += 1


def overloaded(retry_after_s: float | None = None) -> LlmRequestFailed:
    return LlmRequestFailed("overloaded", retryable=True, status_code=529, retry_after_s=retry_after_s)


def answer(text: str = "답변", input_tokens: int = 10, output_tokens: int = 4) -> LlmResponse:
    return LlmResponse(text=text, input_tokens=input_tokens, output_tokens=output_tokens, model="m")


def make_llm(inner, sleeps, clock, *, attempts: int = 3, threshold: int = 5) -> ResilientProvider:
    return ResilientProvider(
        inner,
        retry=RetryPolicy(max_attempts=attempts, base_delay_s=1.0, max_delay_s=4.0, max_retry_after_s=10.0),
        breaker=CircuitBreaker(failure_threshold=threshold, cooldown_s=30.0, clock=clock),
        sleep=sleeps,
        jitter=lambda: 1.0,
    )


class TestRetryPolicy:
    def test_backoff_doubles_up_to_the_cap_with_half_of_it_jittered(self):
        policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0)

        assert [policy.delay_s(n, None, jitter=0.0) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 2.0]
        assert [policy.delay_s(n, None, jitter=1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]

    def test_retry_after_is_honoured_up_to_its_cap(self):
        policy = RetryPolicy(max_retry_after_s=10.0)

        assert policy.delay_s(1, 3.0, jitter=0.9) == 3.0
        assert policy.delay_s(1, 600.0, jitter=0.9) == 10.0


class TestCircuitBreaker:
    def test_opens_after_consecutive_failures_and_probes_once_after_the_cooldown(self, clock):
        breaker = CircuitBreaker(failure_threshold=2, cooldown_s=30.0, clock=clock)

        breaker.record_failure()
        assert (breaker.state, breaker.allow()) == ("closed", True)
        breaker.record_failure()
        assert (breaker.state, breaker.allow()) == ("open", False)

        clock.advance(30)
        assert breaker.state == "half_open"
        assert [breaker.allow(), breaker.allow()] == [True, False]  # one probe at a time

        breaker.record_failure()
        assert breaker.state == "open"
        clock.advance(30)
        assert breaker.allow() is True
        breaker.record_success()
        assert (breaker.state, breaker.allow()) == ("closed", True)

    def test_a_success_resets_the_count_of_consecutive_failures(self, clock):
        breaker = CircuitBreaker(failure_threshold=2, clock=clock)

        breaker.record_failure()
        breaker.record_success()
        breaker.record_failure()

        assert breaker.state == "closed"

    def test_a_probe_that_never_reports_stops_blocking_after_a_cooldown(self, clock):
        breaker = CircuitBreaker(failure_threshold=1, cooldown_s=30.0, clock=clock)
        breaker.record_failure()
        clock.advance(30)
        assert breaker.allow() is True  # this probe gets cancelled and never reports

        clock.advance(30)

        assert breaker.allow() is True


class TestResilientComplete:
    async def test_retries_a_retryable_failure_and_sums_up_usage(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(), overloaded(retry_after_s=7.0), answer("15일입니다."))
        llm = make_llm(inner, sleeps, clock)

        response = await llm.complete(make_request())

        assert response.text == "15일입니다."
        assert sleeps.delays == [1.0, 7.0]
        usage = llm.usage
        assert (usage.calls, usage.attempts, usage.retries, usage.failures) == (1, 3, 2, 2)
        assert (usage.input_tokens, usage.output_tokens) == (10, 4)

    async def test_gives_up_after_max_attempts_with_the_last_failure(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(), overloaded(), overloaded(), answer())

        with pytest.raises(LlmRequestFailed, match="overloaded"):
            await make_llm(inner, sleeps, clock).complete(make_request())

        assert inner.attempts == 3

    async def test_output_invalid_is_not_retried_but_counts_against_the_service(
        self, make_request, sleeps, clock
    ):
        inner = ScriptedProvider(LlmOutputInvalid("no JSON"), answer())
        llm = make_llm(inner, sleeps, clock, threshold=1)

        with pytest.raises(LlmOutputInvalid):
            await llm.complete(make_request())

        assert inner.attempts == 1
        assert (llm.available, llm.usage.invalid_outputs) == (False, 1)

    async def test_an_exception_outside_the_protocol_becomes_llm_unavailable_and_counts(
        self, make_request, sleeps, clock
    ):
        inner = ScriptedProvider(ValueError("Expecting value: line 1 column 1"), answer())
        llm = make_llm(inner, sleeps, clock, threshold=1)

        with pytest.raises(LlmRequestFailed, match="ValueError"):
            await llm.complete(make_request())

        assert (inner.attempts, llm.breaker_state) == (1, "open")

    async def test_an_attempt_that_hangs_is_cut_off_and_opens_the_breaker_at_once(
        self, make_request, sleeps, clock
    ):
        inner = ScriptedProvider(HANG, answer("늦었지만 답"))
        llm = make_llm(inner, sleeps, clock, threshold=5)

        with pytest.raises(LlmRequestFailed) as failed:
            await llm.complete(make_request(timeout_s=0.02))

        assert failed.value.hung is True
        assert (inner.attempts, llm.breaker_state, llm.usage.hangs) == (1, "open", 1)
        with pytest.raises(LlmUnavailable, match="circuit breaker is open"):
            await llm.complete(make_request())
        assert inner.attempts == 1

    async def test_no_retry_is_started_that_the_calls_deadline_cannot_wait_for(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(retry_after_s=8.0), answer())

        with pytest.raises(LlmRequestFailed, match="overloaded"):
            await make_llm(inner, sleeps, clock).complete(make_request(deadline_s=5.0))

        assert (inner.attempts, sleeps.delays) == (1, [])

    async def test_usage_is_counted_per_stage_for_the_service_and_the_question(self, make_request, sleeps, clock):
        inner = ScriptedProvider(answer(input_tokens=100, output_tokens=20), answer(input_tokens=7, output_tokens=3))
        llm = make_llm(inner, sleeps, clock)

        with llm_call_budget(LlmCallBudget(5)) as budget:
            await llm.complete(make_request(stage="grade"))
            await llm.complete(make_request(stage="grade"))

        grade = llm.usage.by_stage["grade"]
        assert (grade.calls, grade.input_tokens, grade.output_tokens) == (2, 107, 23)
        assert (budget.calls, budget.input_tokens, budget.output_tokens) == (2, 107, 23)

    async def test_a_closed_budget_refuses_the_rest_of_the_question(self, make_request, sleeps, clock):
        inner = ScriptedProvider(answer())
        llm = make_llm(inner, sleeps, clock)

        with llm_call_budget(LlmCallBudget(5)) as budget:
            budget.close("the answer is quoted offline")
            assert llm.available is False
            with pytest.raises(LlmBudgetExhausted, match="quoted offline"):
                await llm.complete(make_request())

        assert inner.attempts == 0

    async def test_open_breaker_refuses_without_calling_the_provider(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(), overloaded(), answer())
        llm = make_llm(inner, sleeps, clock, threshold=2)

        with pytest.raises(LlmUnavailable, match="circuit breaker is open"):
            await llm.complete(make_request())
        with pytest.raises(LlmUnavailable, match="circuit breaker is open"):
            await llm.complete(make_request())

        assert inner.attempts == 2
        assert (llm.available, llm.usage.rejected) == (False, 1)


class TestResilientStream:
    async def test_failure_before_the_first_delta_is_retried(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(), ["제1조", "(목적)"])
        llm = make_llm(inner, sleeps, clock)

        stream = llm.stream(make_request())
        deltas = [delta async for delta in stream]

        assert deltas == ["제1조", "(목적)"]
        assert stream.response is not None and stream.response.text == "제1조(목적)"
        assert llm.usage.output_tokens == 2

    async def test_idle_timeout_after_a_delta_raises_interrupted_and_does_not_retry(
        self, make_request, sleeps, clock
    ):
        inner = ScriptedProvider(["이 규정은 ", HANG], ["다시 시작"])
        llm = make_llm(inner, sleeps, clock)

        received: list[str] = []
        with pytest.raises(LlmStreamInterrupted) as interrupted:
            async for delta in llm.stream(make_request(timeout_s=0.02)):
                received.append(delta)

        assert interrupted.value.partial_text == "이 규정은 "
        assert received == ["이 규정은 "]
        assert inner.attempts == 1
        assert inner.closed_streams == 1

    async def test_stopping_early_closes_the_inner_stream(self, make_request, sleeps, clock):
        inner = ScriptedProvider(["하나", "둘", "셋"])
        stream = make_llm(inner, sleeps, clock).stream(make_request())

        assert await anext(stream) == "하나"
        await stream.aclose()

        assert inner.closed_streams == 1


class TestLlmCallBudget:
    def test_spend_counts_calls_and_refuses_when_none_are_left(self):
        budget = LlmCallBudget(2)

        budget.spend()
        budget.spend()
        with pytest.raises(LlmBudgetExhausted, match="2 LLM calls"):
            budget.spend()

        assert (budget.calls, budget.remaining) == (2, 0)

    async def test_each_call_spends_one_unit_whatever_its_retries(self, make_request, sleeps, clock):
        inner = ScriptedProvider(overloaded(), answer(), ["스트림"], answer())
        llm = make_llm(inner, sleeps, clock)

        with llm_call_budget(LlmCallBudget(2)) as budget:
            await llm.complete(make_request())
            _ = [delta async for delta in llm.stream(make_request())]
            with pytest.raises(LlmBudgetExhausted):
                await llm.complete(make_request())

        assert budget.calls == 2
        assert inner.attempts == 3  # the refused third call sent nothing
        assert current_llm_call_budget() is None

    async def test_tasks_started_inside_the_scope_share_the_budget(self, make_request, sleeps, clock):
        inner = ScriptedProvider(answer(), answer(), answer())
        llm = make_llm(inner, sleeps, clock)

        with llm_call_budget(LlmCallBudget(5)) as budget:
            await asyncio.gather(*(llm.complete(make_request()) for _ in range(3)))

        assert budget.calls == 3

    async def test_calls_outside_a_scope_are_not_limited(self, make_request, sleeps, clock):
        inner = ScriptedProvider(answer(), answer())
        llm = make_llm(inner, sleeps, clock)

        await llm.complete(make_request())
        await llm.complete(make_request())

        assert llm.usage.calls == 2


def test_request_needs_at_least_one_message():
    with pytest.raises(ValueError, match="at least 1"):
        LlmRequest(system="s", messages=())
