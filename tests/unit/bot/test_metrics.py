from __future__ import annotations

from bot.metrics import Metrics


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
