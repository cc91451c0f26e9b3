"""Prometheus metrics of the bot, each set on its own registry so tests and replicas never share one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from rag.llm import LlmUsage

_BREAKER_STATES = ("closed", "half_open", "open")


class WatchedLlm(Protocol):
    """What `/metrics` reads from the LLM provider at scrape time (rag.llm.ResilientProvider)."""

    @property
    def usage(self) -> LlmUsage: ...

    @property
    def breaker_state(self) -> str: ...


class _LlmCollector(Collector):
    """Reads the provider's counters when scraped, so the provider needs no metrics code of its own."""

    def __init__(self, llm: WatchedLlm, namespace: str) -> None:
        self._llm = llm
        self._ns = namespace

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        usage = self._llm.usage
        ns = self._ns
        calls = CounterMetricFamily(f"{ns}_llm_stage_calls", "LLM calls by stage.", labels=["stage"])
        failures = CounterMetricFamily(f"{ns}_llm_stage_failures", "Failed LLM attempts by stage.", labels=["stage"])
        tokens = CounterMetricFamily(f"{ns}_llm_tokens", "LLM tokens by stage and direction (input, output).",
                                     labels=["stage", "direction"])
        for stage, counts in sorted(usage.by_stage.items()):
            calls.add_metric([stage], counts.calls)
            failures.add_metric([stage], counts.failures)
            tokens.add_metric([stage, "input"], counts.input_tokens)
            tokens.add_metric([stage, "output"], counts.output_tokens)
        events = CounterMetricFamily(f"{ns}_llm_events", "LLM retries, hangs, invalid replies, rejected calls.",
                                     labels=["event"])
        for event in ("retries", "hangs", "invalid_outputs", "interrupted_streams", "rejected"):
            events.add_metric([event], getattr(usage, event))
        breaker = GaugeMetricFamily(f"{ns}_llm_breaker_state", "1 for the LLM circuit breaker's current state.",
                                    labels=["state"])
        current = self._llm.breaker_state
        for state in _BREAKER_STATES:
            breaker.add_metric([state], 1.0 if state == current else 0.0)
        yield from (calls, failures, tokens, events, breaker)

# Answers take seconds (LLM streaming), stages take milliseconds to seconds.
_ANSWER_BUCKETS_S = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0)
_STAGE_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The bot's counters, histograms and gauges; `render()` is the body of `GET /metrics`.

    Outcomes of a turn: `answered`, `invalid`, `rate_limited`, `busy`, `timeout`, `failed` (the pipeline
    ended with its own error message) and `error` (an unexpected exception).
    """

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, registry: CollectorRegistry | None = None, *, namespace: str = "regbot") -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._namespace = namespace
        reg = self.registry
        self.requests = Counter(
            "requests",
            "Turns handled, by platform and outcome.",
            ["platform", "outcome"],
            namespace=namespace,
            registry=reg,
        )
        self.answer_latency = Histogram(
            "answer_latency_seconds",
            "Time from receiving a turn to its final answer.",
            ["platform", "route"],
            namespace=namespace,
            registry=reg,
            buckets=_ANSWER_BUCKETS_S,
        )
        self.stage_latency = Histogram(
            "stage_latency_seconds",
            "Time spent in each pipeline stage (Answer.timings_ms).",
            ["stage"],
            namespace=namespace,
            registry=reg,
            buckets=_STAGE_BUCKETS_S,
        )
        self.llm_calls = Counter(
            "llm_calls",
            "LLM calls made to answer turns, by route.",
            ["route"],
            namespace=namespace,
            registry=reg,
        )
        self.cache_lookups = Counter(
            "cache_lookups",
            "Semantic cache lookups, by result (hit or miss).",
            ["result"],
            namespace=namespace,
            registry=reg,
        )
        self.errors = Counter(
            "errors",
            "Failures by kind (internal, pipeline, timeout, lock, state).",
            ["kind"],
            namespace=namespace,
            registry=reg,
        )
        self.duplicates = Counter(
            "duplicate_events",
            "Platform deliveries dropped as duplicates.",
            namespace=namespace,
            registry=reg,
        )
        self.feedback = Counter(
            "feedback",
            "Feedback received, by platform and rating.",
            ["platform", "rating"],
            namespace=namespace,
            registry=reg,
        )
        self.queue_depth = Gauge(
            "queue_depth",
            "Turns waiting for an answer slot.",
            namespace=namespace,
            registry=reg,
        )
        self.active_answers = Gauge(
            "active_answers",
            "Turns being answered right now.",
            namespace=namespace,
            registry=reg,
        )
        self.state_degraded = Gauge(
            "state_degraded",
            "1 while Redis is unreachable and state is kept in-process.",
            namespace=namespace,
            registry=reg,
        )
        self.state_failovers = Counter(
            "state_failovers",
            "Switches from Redis to in-process state.",
            namespace=namespace,
            registry=reg,
        )

    def watch_llm(self, llm: WatchedLlm) -> None:
        """Export the LLM provider's per-stage calls and tokens, failures and breaker state on this registry."""
        self.registry.register(_LlmCollector(llm, self._namespace))

    def observe_request(self, platform: str, outcome: str) -> None:
        self.requests.labels(platform=platform, outcome=outcome).inc()

    def observe_answer(
        self, *, platform: str, route: str, latency_s: float, llm_calls: int, timings_ms: Mapping[str, float]
    ) -> None:
        """Record a finished answer: its latency, LLM calls and per-stage timings."""
        self.answer_latency.labels(platform=platform, route=route).observe(max(latency_s, 0.0))
        if llm_calls:
            self.llm_calls.labels(route=route).inc(llm_calls)
        for stage, elapsed_ms in timings_ms.items():
            self.stage_latency.labels(stage=stage).observe(max(elapsed_ms, 0.0) / 1000.0)

    def observe_cache(self, *, hit: bool) -> None:
        """For the semantic cache: one call per lookup."""
        self.cache_lookups.labels(result="hit" if hit else "miss").inc()

    def observe_error(self, kind: str) -> None:
        self.errors.labels(kind=kind).inc()

    def observe_duplicate(self) -> None:
        self.duplicates.inc()

    def observe_feedback(self, platform: str, rating: str) -> None:
        self.feedback.labels(platform=platform, rating=rating).inc()

    def set_queue(self, *, waiting: int, active: int) -> None:
        self.queue_depth.set(waiting)
        self.active_answers.set(active)

    def set_state_degraded(self, degraded: bool) -> None:
        """Called by FailoverStateStore on every switch; a switch to degraded also counts a failover."""
        if degraded:
            self.state_failovers.inc()
        self.state_degraded.set(1 if degraded else 0)

    def value(self, name: str, labels: Mapping[str, str] | None = None) -> float:
        """The current value of one sample (0.0 when absent), e.g. `value("regbot_requests_total", {...})`."""
        found = self.registry.get_sample_value(name, dict(labels or {}))
        return found if found is not None else 0.0

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric on this registry."""
        return generate_latest(self.registry)


__all__ = ["Metrics"]
