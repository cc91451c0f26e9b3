"""Retries, a circuit breaker, a per-question call budget and usage counters around any provider.

`ResilientProvider` is what stages receive. One `complete()` or `stream()` is one *call*: it spends
one unit of the question's `LlmCallBudget` and makes up to `RetryPolicy.max_attempts` *attempts*.

- Every failure of the inner provider becomes an `LlmUnavailable` and counts for the breaker: a
  status, a transport error, a hang, a reply that is not what was asked for, an empty stream, and
  any exception a vendor SDK lets escape.
- Retried: `LlmRequestFailed` with `retryable` (429, 5xx, 529 overloaded, connection errors), after
  exponential backoff with jitter, or the server's `retry-after` capped at `max_retry_after_s`, and
  only while the call's `deadline_s` leaves room. Not retried: other 4xx, hangs, `LlmOutputInvalid`.
- Hangs: each wait for a stream's next event (providers yield "" for events without text, so a
  slow reply keeps making progress) and each attempt of `complete()` is bounded by
  `request.timeout_s`. Nothing within it is a hang, which opens the breaker at once: a dead
  endpoint then costs one question one timeout, and the following ones nothing until a probe.
  A stream that makes progress but passes `deadline_s` is an ordinary failure.
- A stream is retried only before its first delta; a failure after that raises
  `LlmStreamInterrupted(partial_text)` so the caller keeps what the user already saw. A stream that
  ends without any text (and without tool calls) is `LlmOutputInvalid`.
- The budget travels in a context variable, so stages built once at startup need no extra
  argument: the pipeline runs each turn inside `with llm_call_budget(LlmCallBudget(5)) as budget:`
  and reports `budget.calls` as the answer's `llm_calls`. Tasks started inside share it.
  `budget.close()` makes every later call of the turn use the offline sibling.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import aclosing, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag.errors import LlmStreamInterrupted, LlmUnavailable
from rag.llm.base import (
    LlmOutputInvalid,
    LlmProvider,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
)

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class LlmBudgetExhausted(LlmUnavailable):
    """The question has made all the LLM calls it may; the stage falls back to its offline sibling."""


@dataclass
class StageUsage:
    """Calls, failures and tokens of one stage (`LlmRequest.stage`)."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class LlmCallBudget:
    """How many LLM calls one question may make. `calls` is what it has spent so far; `by_stage` what
    each stage spent (calls and tokens), for the turn's log line."""

    def __init__(self, max_calls: int) -> None:
        if max_calls < 0:
            raise ValueError("max_calls must be zero or more")
        self.max_calls = max_calls
        self.calls = 0
        self.closed_reason = ""
        self.by_stage: dict[str, StageUsage] = {}

    @property
    def remaining(self) -> int:
        return 0 if self.closed_reason else self.max_calls - self.calls

    def spend(self, stage: str = "") -> None:
        """Count one call, or raise `LlmBudgetExhausted` when none is left."""
        if self.closed_reason:
            raise LlmBudgetExhausted(f"no more LLM calls this question: {self.closed_reason}")
        if self.calls >= self.max_calls:
            raise LlmBudgetExhausted(f"this question has used its {self.max_calls} LLM calls")
        self.calls += 1
        self.by_stage.setdefault(stage or "other", StageUsage()).calls += 1

    def close(self, reason: str) -> None:
        """No further calls this question (e.g. the answer is already quoted offline)."""
        self.closed_reason = reason or "closed"

    def add_tokens(self, stage: str, input_tokens: int, output_tokens: int) -> None:
        usage = self.by_stage.setdefault(stage or "other", StageUsage())
        usage.input_tokens += input_tokens
        usage.output_tokens += output_tokens

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.by_stage.values())

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.by_stage.values())


_current_budget: ContextVar[LlmCallBudget | None] = ContextVar("regbot_llm_call_budget", default=None)


@contextmanager
def llm_call_budget(budget: LlmCallBudget) -> Iterator[LlmCallBudget]:
    """Make `budget` the one every `ResilientProvider` call inside this block spends from."""
    token = _current_budget.set(budget)
    try:
        yield budget
    finally:
        try:
            _current_budget.reset(token)
        except ValueError:
            # Exited from another context (an async generator resumed by another task).
            _current_budget.set(None)


def current_llm_call_budget() -> LlmCallBudget | None:
    """The budget of the running turn, or None outside `llm_call_budget`."""
    return _current_budget.get()


class RetryPolicy(BaseModel):
    """How often and how long to retry one call."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(3, ge=1)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(8.0, ge=0)
    max_retry_after_s: float = Field(20.0, ge=0)

    def delay_s(self, attempt: int, retry_after_s: float | None, jitter: float) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based); `jitter` is in [0, 1)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        # Half fixed, half random: spreads out clients that failed together without waiting ~0 s.
        return backoff / 2 + backoff / 2 * jitter


BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Opens after `failure_threshold` consecutive failures, or at once on a hang; after `cooldown_s`
    it lets one probe through (half-open): a success closes it, a failure opens it for another cooldown."""

    def __init__(
        self, *, failure_threshold: int = 3, cooldown_s: float = 30.0, clock: Clock = time.monotonic
    ):
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        self._threshold = failure_threshold
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._probe_started_at: float | None = None

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at < self._cooldown_s:
            return "open"
        return "half_open"

    def allow(self) -> bool:
        """May an attempt go out now? In half-open, only one probe at a time."""
        state = self.state
        if state == "closed":
            return True
        if state == "open":
            return False
        now = self._clock()
        # A probe that never reported (cancelled) stops blocking others after one cooldown.
        if self._probe_started_at is not None and now - self._probe_started_at < self._cooldown_s:
            return False
        self._probe_started_at = now
        return True

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._probe_started_at = None

    def record_failure(self, *, hung: bool = False) -> None:
        """Count a failure; a hang (nothing received within the timeout) opens the breaker at once."""
        self._failures = self._threshold if hung else self._failures + 1
        self._probe_started_at = None
        if self._failures >= self._threshold:
            self._opened_at = self._clock()


@dataclass
class LlmUsage:
    """Cumulative counters of one `ResilientProvider`, for metrics."""

    calls: int = 0  # complete()/stream() calls admitted
    attempts: int = 0  # requests sent to the provider
    retries: int = 0
    failures: int = 0  # attempts that failed
    rejected: int = 0  # calls refused: breaker open or budget spent
    invalid_outputs: int = 0  # replies that were not the requested JSON
    interrupted_streams: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    hangs: int = 0  # attempts that received nothing within the hang timeout
    by_stage: dict[str, StageUsage] = field(default_factory=dict)


class ResilientProvider:
    """Wraps a provider with retries, a circuit breaker, the per-question budget and usage counters."""

    def __init__(
        self,
        inner: LlmProvider,
        *,
        retry: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        clock: Clock = time.monotonic,
    ) -> None:
        """
        Args:
            inner: the provider that makes the requests.
            retry: attempts and delays; `RetryPolicy()` by default.
            breaker: shared breaker; a fresh `CircuitBreaker()` by default.
            sleep / jitter / clock: injectable so tests wait for nothing and get fixed delays.
        """
        self._inner = inner
        self._retry = retry or RetryPolicy()
        self._breaker = breaker or CircuitBreaker()
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._usage = LlmUsage()

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def available(self) -> bool:
        """False while the breaker is open or the running question has no call left."""
        budget = _current_budget.get()
        if budget is not None and budget.remaining <= 0:
            return False
        return self._inner.available and self._breaker.state != "open"

    @property
    def breaker_state(self) -> BreakerState:
        return self._breaker.state

    @property
    def usage(self) -> LlmUsage:
        """A snapshot of the counters."""
        snapshot = replace(self._usage)
        snapshot.by_stage = {name: replace(usage) for name, usage in self._usage.by_stage.items()}
        return snapshot

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """The inner `complete()`, retried; raises `LlmUnavailable` (or a subclass) when it cannot."""
        deadline = None if request.deadline_s is None else self._clock() + request.deadline_s
        for attempt in range(1, self._retry.max_attempts + 1):
            self._begin_attempt(attempt, request)
            timeout_s = request.timeout_s
            if deadline is not None:
                timeout_s = max(min(timeout_s, deadline - self._clock()), 0.001)
            try:
                async with asyncio.timeout(timeout_s):
                    response = await self._inner.complete(request)
            except TimeoutError as error:
                # A whole reply is awaited here: no progress to tell slow from hung, so it counts as a hang.
                failure = _timed_out(timeout_s, error)
            except LlmRequestFailed as error:
                failure = error
            except LlmOutputInvalid:
                self._record_failure(request)
                self._usage.invalid_outputs += 1
                raise
            except LlmUnavailable:
                raise
            except Exception as error:
                failure = _unexpected(self.name, error)
            else:
                self._record_success(request, response)
                return response
            await self._after_failure(request, failure, attempt, deadline)
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    def stream(self, request: LlmRequest) -> LlmStream:
        """The inner `stream()`, retried until the first delta; checks happen on first iteration."""
        return LlmStream(self._stream_events(request))

    async def aclose(self) -> None:
        """Close the inner provider's HTTP client."""
        aclose = getattr(self._inner, "aclose", None)
        if aclose is not None:
            await aclose()

    async def _stream_events(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        deadline = None if request.deadline_s is None else self._clock() + request.deadline_s
        for attempt in range(1, self._retry.max_attempts + 1):
            self._begin_attempt(attempt, request)
            parts: list[str] = []
            wait_s, by_deadline = request.timeout_s, False
            try:
                async with aclosing(self._inner.stream(request)) as inner:
                    while True:
                        # The hang timeout, unless the call's deadline comes first (slow, not hung).
                        wait_s, by_deadline = request.timeout_s, False
                        if deadline is not None and deadline - self._clock() < wait_s:
                            wait_s, by_deadline = max(deadline - self._clock(), 0.001), True
                        try:
                            async with asyncio.timeout(wait_s):
                                delta = await anext(inner)
                        except StopAsyncIteration:
                            break
                        parts.append(delta)
                        if delta:  # "" is the inner provider's progress signal, not for the caller
                            yield delta
                    response = inner.response or LlmResponse(text="".join(parts))
                if request.json_schema is None and not "".join(parts).strip() and not response.tool_calls:
                    raise LlmOutputInvalid("the stream ended without any text")
            except TimeoutError as error:
                failure = _timed_out(wait_s, error, hung=not by_deadline)
            except LlmRequestFailed as error:
                failure = error
            except LlmOutputInvalid as error:
                self._record_failure(request)
                self._usage.invalid_outputs += 1
                if "".join(parts).strip():
                    self._usage.interrupted_streams += 1
                    raise LlmStreamInterrupted("".join(parts), str(error)) from error
                raise
            except LlmStreamInterrupted:
                raise
            except LlmUnavailable:
                raise
            except Exception as error:
                failure = _unexpected(self.name, error)
            else:
                self._record_success(request, response)
                yield response
                return
            if "".join(parts):
                # Text was shown: never retried, the caller keeps it.
                self._record_failure(request, hung=failure.hung)
                self._usage.interrupted_streams += 1
                raise LlmStreamInterrupted("".join(parts), str(failure)) from failure
            await self._after_failure(request, failure, attempt, deadline)

    def _begin_attempt(self, attempt: int, request: LlmRequest) -> None:
        """Refuse when the breaker is open; the first attempt of a call also spends the question's budget."""
        if not self._breaker.allow():
            self._usage.rejected += 1
            raise self._breaker_open()
        if attempt == 1:
            budget = _current_budget.get()
            if budget is not None:
                try:
                    budget.spend(request.stage)
                except LlmBudgetExhausted:
                    self._usage.rejected += 1
                    raise
            self._usage.calls += 1
            self._stage(request).calls += 1
        self._usage.attempts += 1

    def _stage(self, request: LlmRequest) -> StageUsage:
        return self._usage.by_stage.setdefault(request.stage or "other", StageUsage())

    def _breaker_open(self) -> LlmUnavailable:
        return LlmUnavailable(f"the {self.name} circuit breaker is open after repeated failures")

    def _record_success(self, request: LlmRequest, response: LlmResponse) -> None:
        self._breaker.record_success()
        self._usage.input_tokens += response.input_tokens
        self._usage.output_tokens += response.output_tokens
        stage = self._stage(request)
        stage.input_tokens += response.input_tokens
        stage.output_tokens += response.output_tokens
        budget = _current_budget.get()
        if budget is not None:
            budget.add_tokens(request.stage, response.input_tokens, response.output_tokens)

    def _record_failure(self, request: LlmRequest, *, hung: bool = False) -> None:
        self._usage.failures += 1
        self._stage(request).failures += 1
        if hung:
            self._usage.hangs += 1
        self._breaker.record_failure(hung=hung)

    async def _after_failure(self, request: LlmRequest, failure: LlmRequestFailed, attempt: int,
                             deadline: float | None) -> None:
        """Count the failure, then raise it or wait before the next attempt."""
        self._record_failure(request, hung=failure.hung)
        if not failure.retryable or failure.hung:
            raise failure
        if self._breaker.state == "open":
            # No point waiting for an attempt the breaker will refuse.
            raise self._breaker_open() from failure
        if attempt >= self._retry.max_attempts:
            logger.warning("%s failed %d times, giving up: %s", self.name, attempt, failure)
            raise failure
        delay_s = self._retry.delay_s(attempt, failure.retry_after_s, self._jitter())
        if deadline is not None and self._clock() + delay_s >= deadline:
            logger.warning("%s failed (%s); no time left to retry within the call's deadline", self.name, failure)
            raise failure
        logger.info("%s attempt %d failed (%s); retrying in %.2f s", self.name, attempt, failure, delay_s)
        self._usage.retries += 1
        await self._sleep(delay_s)


def _timed_out(timeout_s: float, error: TimeoutError, *, hung: bool = True) -> LlmRequestFailed:
    reason = f"nothing received within {timeout_s:.1f} s" if hung else "not finished within the call's deadline"
    failure = LlmRequestFailed(reason, retryable=True, hung=hung)
    failure.__cause__ = error
    return failure


def _unexpected(name: str, error: Exception) -> LlmRequestFailed:
    # Never the exception text: it may quote the reply. The type is enough to find the cause in logs.
    logger.warning("%s raised %s outside the provider protocol", name, type(error).__name__, exc_info=error)
    failure = LlmRequestFailed(f"{name} failed: {type(error).__name__}", retryable=False)
    failure.__cause__ = error
    return failure
