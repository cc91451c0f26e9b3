from __future__ import annotations

import pytest

from bot.service.metrics import Metrics


class TestMetrics:
    def test_each_instance_has_its_own_registry(self):
        first, second = Metrics(), Metrics()
        first.observe_request("slack", "answered")
        assert first.value("regbot_requests_total", {"platform": "slack", "outcome": "answered"}) == 1
        assert second.value("regbot_requests_total", {"platform": "slack", "outcome": "answered"}) == 0

    def test_render_exposes_stage_timings_in_seconds(self):
        metrics = Metrics()
        metrics.observe_answer(
            platform="teams", route="lookup", latency_s=1.2, llm_calls=0, timings_ms={"lookup": 30.0}
        )
        body = metrics.render().decode()
        assert 'regbot_stage_latency_seconds_sum{stage="lookup"} 0.03' in body
        assert 'regbot_answer_latency_seconds_count{platform="teams",route="lookup"} 1.0' in body

    def test_cache_hits_and_state_switches_are_counted(self):
        metrics = Metrics()
        metrics.observe_cache(hit=True)
        metrics.observe_cache(hit=False)
        metrics.set_state_degraded(True)
        metrics.set_state_degraded(False)
        assert metrics.value("regbot_cache_lookups_total", {"result": "hit"}) == 1
        assert metrics.value("regbot_state_failovers_total") == 1
        assert metrics.value("regbot_state_degraded") == 0

    async def test_llm_calls_tokens_per_stage_and_the_breaker_state_are_exported(self):
        from rag.llm import CircuitBreaker, LlmRequest, LlmRequestFailed, LlmResponse, LlmUnavailable, ResilientProvider
        from rag.models import Message, Role

        class Answers:
            name, available = "scripted", True

            def __init__(self):
                self.replies = [LlmResponse(text="답", input_tokens=120, output_tokens=30),
                                LlmRequestFailed("down", retryable=True, status_code=503)]

            async def complete(self, request):
                reply = self.replies.pop(0)
                if isinstance(reply, Exception):
                    raise reply
                return reply

        llm = ResilientProvider(Answers(), breaker=CircuitBreaker(failure_threshold=1))
        metrics = Metrics()
        metrics.watch_llm(llm)
        request = LlmRequest(messages=(Message(role=Role.USER, content="연차?"),), stage="grade")
        await llm.complete(request)
        with pytest.raises(LlmUnavailable):
            await llm.complete(request)

        assert metrics.value("regbot_llm_stage_calls_total", {"stage": "grade"}) == 2
        assert metrics.value("regbot_llm_tokens_total", {"stage": "grade", "direction": "input"}) == 120
        assert metrics.value("regbot_llm_tokens_total", {"stage": "grade", "direction": "output"}) == 30
        assert metrics.value("regbot_llm_stage_failures_total", {"stage": "grade"}) == 1
        assert metrics.value("regbot_llm_breaker_state", {"state": "open"}) == 1
        assert 'regbot_llm_breaker_state{state="closed"} 0.0' in metrics.render().decode()
