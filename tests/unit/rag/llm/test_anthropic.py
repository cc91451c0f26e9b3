"""AnthropicProvider against a respx-mocked Messages API (httpx is aliased to httpx2 in the root conftest)."""

from __future__ import annotations

import json

import httpx
import httpx2
import pytest

from rag.llm import (
    AnthropicProvider,
    CircuitBreaker,
    LlmOutputInvalid,
    LlmRequestFailed,
    LlmStreamInterrupted,
    LlmUnavailable,
    ResilientProvider,
    RetryPolicy,
)

MESSAGES_URL = "http://llm.test/v1/messages"
SCHEMA = {
    "type": "object",
    "properties": {"route": {"type": "string", "enum": ["chitchat", "lookup", "search"]}},
    "required": ["route"],
}


def make_provider() -> AnthropicProvider:
    return AnthropicProvider(
        api_key="test-key",
        base_url="http://llm.test",
        fast_model="claude-test-fast",
        strong_model="claude-test-strong",
    )


def resilient(provider: AnthropicProvider, sleeps, clock, *, threshold: int = 5, attempts: int = 3):
    return ResilientProvider(
        provider,
        retry=RetryPolicy(max_attempts=attempts, max_retry_after_s=2.0),
        breaker=CircuitBreaker(failure_threshold=threshold, cooldown_s=30.0, clock=clock),
        sleep=sleeps,
        jitter=lambda: 0.5,
    )


def sent_body(route, index: int = -1) -> dict:
    return json.loads(route.calls[index].request.content)


class TestAnthropicComplete:
    async def test_complete_returns_text_and_usage_and_sends_the_request(
        self, respx_mock, make_request, payloads
    ):
        route = respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message({"type": "text", "text": "연차휴가는 15일입니다."})
        )

        response = await make_provider().complete(make_request())

        assert response.text == "연차휴가는 15일입니다."
        assert (response.input_tokens, response.output_tokens, response.model) == (12, 7, "claude-test-fast")
        assert response.data is None
        body = sent_body(route)
        assert body["model"] == "claude-test-fast"
        assert body["system"] == "회사 규정에 근거해 답하세요."
        assert body["messages"] == [{"role": "user", "content": "연차휴가는 며칠인가요?"}]
        assert body["max_tokens"] == 200
        assert "temperature" not in body  # API 2026-10-21 rejects sampling parameters
        assert "tools" not in body
        assert route.calls[0].request.headers["authorization"] == "Bearer test-key"

    async def test_strong_tier_uses_the_strong_model(self, respx_mock, make_request, payloads):
        route = respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message({"type": "text", "text": "답"}, model="claude-test-strong")
        )

        await make_provider().complete(make_request(tier="strong"))

        assert sent_body(route)["model"] == "claude-test-strong"

    async def test_json_schema_forces_one_tool_and_returns_its_input(
        self, respx_mock, make_request, payloads
    ):
        route = respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message(
                {"type": "tool_use", "id": "toolu_1", "name": "record_result", "input": {"route": "search"}},
                stop_reason="tool_use",
            )
        )

        response = await make_provider().complete(make_request(json_schema=SCHEMA))

        assert response.data == {"route": "search"}
        body = sent_body(route)
        assert body["tools"] == [
            {"name": "record_result", "description": body["tools"][0]["description"], "input_schema": SCHEMA}
        ]
        assert body["tool_choice"] == {"type": "tool", "name": "record_result"}

    async def test_truncated_tool_json_raises_output_invalid_without_retry(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        # A reply cut off by max_tokens: the tool input arrives as an unparsable fragment.
        route = respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message(
                {"type": "tool_use", "id": "toolu_1", "name": "record_result", "input": '{"route": "sea'},
                stop_reason="max_tokens",
            )
        )
        llm = resilient(make_provider(), sleeps, clock)

        with pytest.raises(LlmOutputInvalid, match="does not parse"):
            await llm.complete(make_request(json_schema=SCHEMA))

        assert route.call_count == 1
        assert llm.usage.invalid_outputs == 1
        assert llm.breaker_state == "closed"

    async def test_reply_without_the_tool_call_raises_output_invalid(
        self, respx_mock, make_request, payloads
    ):
        respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message(
                {"type": "text", "text": "검색이 필요합니다."}, stop_reason="max_tokens"
            )
        )

        with pytest.raises(LlmOutputInvalid, match="stop_reason=max_tokens"):
            await make_provider().complete(make_request(json_schema=SCHEMA))

    async def test_tool_input_missing_a_required_key_raises_output_invalid(
        self, respx_mock, make_request, payloads
    ):
        respx_mock.post(MESSAGES_URL).respond(
            json=payloads.anthropic_message(
                {"type": "tool_use", "id": "toolu_1", "name": "record_result", "input": {}},
                stop_reason="tool_use",
            )
        )

        with pytest.raises(LlmOutputInvalid, match="required keys: route"):
            await make_provider().complete(make_request(json_schema=SCHEMA))

    async def test_injected_http_client_with_mock_transport_receives_the_request(
        self, make_request, payloads
    ):
        seen: list[httpx2.Request] = []

        def handler(request: httpx2.Request) -> httpx2.Response:
            seen.append(request)
            return httpx2.Response(200, json=payloads.anthropic_message({"type": "text", "text": "네"}))

        client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
        provider = AnthropicProvider(api_key="test-key", base_url="http://other.test", http_client=client)

        response = await provider.complete(make_request())

        assert response.text == "네"
        assert str(seen[0].url) == "http://other.test/v1/messages"
        assert json.loads(seen[0].content)["model"] == "claude-haiku-4-5"


class TestAnthropicStream:
    async def test_stream_yields_text_deltas_and_sums_up_usage(self, respx_mock, make_request, payloads):
        route = respx_mock.post(MESSAGES_URL).respond(
            headers={"content-type": "text/event-stream"},
            content=payloads.sse(payloads.anthropic_stream_events("연차휴가는 ", "15일", "입니다.")),
        )

        stream = make_provider().stream(make_request(tier="strong"))
        deltas = [delta async for delta in stream if delta]  # "" marks progress (other events)

        assert deltas == ["연차휴가는 ", "15일", "입니다."]
        assert stream.response is not None
        assert stream.response.text == "연차휴가는 15일입니다."
        assert (stream.response.input_tokens, stream.response.output_tokens) == (21, 9)
        body = sent_body(route)
        assert body["stream"] is True
        assert body["model"] == "claude-test-strong"

    async def test_a_structured_stream_reports_progress_and_ends_with_the_tool_input(
        self, respx_mock, make_request, payloads
    ):
        start = payloads.anthropic_message(stop_reason=None)
        tool_events = [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "record_result", "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": '{"route": "search"}'}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                               "usage": {"output_tokens": 9}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        route = respx_mock.post(MESSAGES_URL).respond(headers={"content-type": "text/event-stream"},
                                                      content=payloads.sse(tool_events))

        stream = make_provider().stream(make_request(json_schema=SCHEMA))
        deltas = [delta async for delta in stream]

        assert deltas and set(deltas) == {""}  # progress only: no JSON reaches a reader of the text
        assert stream.response.data == {"route": "search"}
        assert sent_body(route)["tool_choice"] == {"type": "tool", "name": "record_result"}

    async def test_overloaded_before_the_first_delta_is_retried(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        route = respx_mock.post(MESSAGES_URL).mock(
            side_effect=[
                httpx.Response(
                    529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
                ),
                httpx.Response(
                    200,
                    headers={"content-type": "text/event-stream"},
                    content=payloads.sse(payloads.anthropic_stream_events("제60조에 ", "따릅니다.")),
                ),
            ]
        )
        llm = resilient(make_provider(), sleeps, clock)

        stream = llm.stream(make_request())
        deltas = [delta async for delta in stream]

        assert deltas == ["제60조에 ", "따릅니다."]
        assert route.call_count == 2
        assert sleeps.delays == [0.375]  # 0.5 s backoff, half of it jittered at 0.5
        assert llm.usage.output_tokens == 9

    async def test_read_timeout_mid_stream_raises_interrupted_with_the_partial_text(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        # message_start, content_block_start, ping and the first two deltas; then the read times out.
        events = payloads.anthropic_stream_events("근로자는 ", "1년간 ", "80% 이상")[:5]
        route = respx_mock.post(MESSAGES_URL).mock(
            side_effect=lambda request: httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=payloads.ScriptedByteStream([payloads.sse(events)], error=httpx2.ReadTimeout("slow")),
            )
        )
        llm = resilient(make_provider(), sleeps, clock)

        received: list[str] = []
        with pytest.raises(LlmStreamInterrupted) as interrupted:
            async for delta in llm.stream(make_request()):
                received.append(delta)

        assert interrupted.value.partial_text == "근로자는 1년간 "
        assert received == ["근로자는 ", "1년간 "]
        assert route.call_count == 1  # never retried once text was shown
        assert llm.usage.interrupted_streams == 1

    async def test_silent_server_mid_stream_hits_the_idle_timeout(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        events = payloads.anthropic_stream_events("부칙 ", "제1조")[:4]  # start, block, ping, one delta
        respx_mock.post(MESSAGES_URL).mock(
            side_effect=lambda request: httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=payloads.ScriptedByteStream([payloads.sse(events)], stall=True),
            )
        )
        llm = resilient(make_provider(), sleeps, clock)

        with pytest.raises(LlmStreamInterrupted) as interrupted:
            async for _ in llm.stream(make_request(timeout_s=0.05)):
                pass

        assert interrupted.value.partial_text == "부칙 "

    async def test_error_event_mid_stream_raises_interrupted(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        events = payloads.anthropic_stream_events("취업규칙 ")[:4]
        events.append(
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        )
        route = respx_mock.post(MESSAGES_URL).respond(
            headers={"content-type": "text/event-stream"}, content=payloads.sse(events)
        )
        llm = resilient(make_provider(), sleeps, clock)

        with pytest.raises(LlmStreamInterrupted) as interrupted:
            async for _ in llm.stream(make_request()):
                pass

        assert interrupted.value.partial_text == "취업규칙 "
        assert route.call_count == 1


class TestAnthropicResilience:
    async def test_rate_limit_is_retried_after_the_capped_retry_after(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        route = respx_mock.post(MESSAGES_URL).mock(
            side_effect=[
                httpx.Response(
                    429,
                    headers={"retry-after": "120"},
                    json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
                ),
                httpx.Response(200, json=payloads.anthropic_message({"type": "text", "text": "15일입니다."})),
            ]
        )
        llm = resilient(make_provider(), sleeps, clock)

        response = await llm.complete(make_request())

        assert response.text == "15일입니다."
        assert route.call_count == 2
        assert sleeps.delays == [2.0]  # the server asked for 120 s; the policy caps it at 2 s
        assert (llm.usage.retries, llm.usage.input_tokens) == (1, 12)

    async def test_connection_error_is_retried(self, respx_mock, make_request, payloads, sleeps, clock):
        route = respx_mock.post(MESSAGES_URL).mock(
            side_effect=[
                httpx.ConnectError("refused"),
                httpx.Response(200, json=payloads.anthropic_message({"type": "text", "text": "네"})),
            ]
        )

        response = await resilient(make_provider(), sleeps, clock).complete(make_request())

        assert response.text == "네"
        assert route.call_count == 2

    async def test_bad_request_is_not_retried(self, respx_mock, make_request, sleeps, clock):
        route = respx_mock.post(MESSAGES_URL).respond(
            400,
            json={"type": "error", "error": {"type": "invalid_request_error", "message": "prompt too long"}},
        )

        with pytest.raises(LlmRequestFailed) as failed:
            await resilient(make_provider(), sleeps, clock).complete(make_request())

        assert (failed.value.status_code, failed.value.retryable) == (400, False)
        assert route.call_count == 1
        assert sleeps.delays == []

    async def test_server_errors_open_the_breaker_and_later_calls_send_nothing(
        self, respx_mock, make_request, payloads, sleeps, clock
    ):
        route = respx_mock.post(MESSAGES_URL).respond(
            500, json={"type": "error", "error": {"type": "api_error", "message": "internal"}}
        )
        llm = resilient(make_provider(), sleeps, clock, threshold=4, attempts=3)

        with pytest.raises(LlmRequestFailed):
            await llm.complete(make_request())  # attempts 1-3 fail
        with pytest.raises(LlmUnavailable, match="circuit breaker is open"):
            await llm.complete(make_request())  # attempt 4 fails and opens the breaker
        with pytest.raises(LlmUnavailable, match="circuit breaker is open"):
            await llm.complete(make_request())

        assert route.call_count == 4
        assert llm.available is False

        # After the cooldown one probe goes out; its success closes the breaker.
        route.respond(json=payloads.anthropic_message({"type": "text", "text": "복구되었습니다."}))
        clock.advance(31)
        response = await llm.complete(make_request())

        assert response.text == "복구되었습니다."
        assert route.call_count == 5
        assert llm.breaker_state == "closed"
