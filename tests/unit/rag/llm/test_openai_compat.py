"""OpenAICompatibleProvider against a respx-mocked /chat/completions (vLLM / Ollama shapes)."""

from __future__ import annotations

import json

import httpx
import httpx2
import pytest

from rag.llm import (
    CircuitBreaker,
    LlmOutputInvalid,
    LlmRequestFailed,
    LlmStreamInterrupted,
    LlmUnavailable,
    OpenAICompatibleProvider,
    ResilientProvider,
    RetryPolicy,
)

COMPLETIONS_URL = "http://vllm.test/v1/chat/completions"
SCHEMA = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
    "required": ["queries"],
}


def make_provider(**overrides) -> OpenAICompatibleProvider:
    fields = {"base_url": "http://vllm.test/v1/", "fast_model": "qwen-small", "api_key": "local-key"}
    fields.update(overrides)
    return OpenAICompatibleProvider(**fields)


def completion(content: str, *, model: str = "qwen-small") -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
    }


def chunk(content: str | None = None, *, usage: dict | None = None) -> dict:
    choices = [] if content is None else [{"index": 0, "delta": {"content": content}, "finish_reason": None}]
    body: dict = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "qwen-small",
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call_completion(arguments: dict, *, name: str = "record_result") -> dict:
    body = completion("")
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}]}
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def sent_body(route, index: int = -1) -> dict:
    return json.loads(route.calls[index].request.content)


class TestOpenAICompatibleComplete:
    async def test_complete_sends_system_first_and_returns_text_and_usage(self, respx_mock, make_request):
        route = respx_mock.post(COMPLETIONS_URL).respond(json=completion("연차휴가는 15일입니다."))

        response = await make_provider().complete(make_request(temperature=0.2))

        assert response.text == "연차휴가는 15일입니다."
        assert (response.input_tokens, response.output_tokens, response.model) == (30, 5, "qwen-small")
        body = sent_body(route)
        assert body["messages"] == [
            {"role": "system", "content": "회사 규정에 근거해 답하세요."},
            {"role": "user", "content": "연차휴가는 며칠인가요?"},
        ]
        assert (body["model"], body["max_tokens"], body["stream"]) == ("qwen-small", 200, False)
        assert body["temperature"] == 0.2
        assert "response_format" not in body
        assert route.calls[0].request.headers["authorization"] == "Bearer local-key"

    async def test_strong_tier_uses_the_strong_model_when_one_is_set(self, respx_mock, make_request):
        route = respx_mock.post(COMPLETIONS_URL).respond(json=completion("답", model="qwen-large"))

        await make_provider(strong_model="qwen-large").complete(make_request(tier="strong"))

        assert sent_body(route)["model"] == "qwen-large"

    async def test_json_schema_is_asked_through_the_forced_record_result_tool_the_prompts_name(
        self, respx_mock, make_request
    ):
        route = respx_mock.post(COMPLETIONS_URL).respond(
            json=tool_call_completion({"queries": ["연차휴가 일수", "연차 발생 요건"]})
        )

        response = await make_provider().complete(make_request(json_schema=SCHEMA))

        assert response.data == {"queries": ["연차휴가 일수", "연차 발생 요건"]}
        body = sent_body(route)
        assert body["tools"] == [{"type": "function", "function": {
            "name": "record_result", "description": body["tools"][0]["function"]["description"],
            "parameters": SCHEMA}}]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "record_result"}}
        assert "response_format" not in body

    async def test_a_server_that_ignores_tool_choice_is_read_from_its_content(self, respx_mock, make_request):
        respx_mock.post(COMPLETIONS_URL).respond(
            json=completion('```json\n{"queries": ["연차휴가 일수"]}\n```'))

        response = await make_provider().complete(make_request(json_schema=SCHEMA))

        assert response.data == {"queries": ["연차휴가 일수"]}

    async def test_a_server_without_tools_then_without_json_schema_ends_on_json_object_for_good(
        self, respx_mock, make_request
    ):
        route = respx_mock.post(COMPLETIONS_URL).mock(
            side_effect=[
                httpx.Response(400, json={"error": {"message": "tool_choice is not supported"}}),
                httpx.Response(
                    400, json={"error": {"message": "response_format json_schema is not supported"}}
                ),
                httpx.Response(200, json=completion('{"queries": ["육아휴직 기간"]}')),
                httpx.Response(200, json=completion('{"queries": ["경조휴가"]}')),
            ]
        )
        provider = make_provider()

        first = await provider.complete(make_request(json_schema=SCHEMA))
        second = await provider.complete(make_request(json_schema=SCHEMA))

        assert (first.data, second.data) == ({"queries": ["육아휴직 기간"]}, {"queries": ["경조휴가"]})
        assert route.call_count == 4
        assert sent_body(route, 1)["response_format"]["type"] == "json_schema"
        assert "record_result 도구 대신" in sent_body(route, 1)["messages"][0]["content"]
        for index in (2, 3):
            body = sent_body(route, index)
            assert body["response_format"] == {"type": "json_object"}
            assert "tools" not in body
            assert '"required": ["queries"]' in body["messages"][0]["content"]
            assert "record_result 도구 대신" in body["messages"][0]["content"]

    async def test_a_prompt_too_long_error_does_not_switch_the_json_mode(self, respx_mock, make_request):
        route = respx_mock.post(COMPLETIONS_URL).respond(
            400, json={"error": {"message": "maximum context length is 8192 tokens"}}
        )

        with pytest.raises(LlmRequestFailed, match="400") as failed:
            await make_provider().complete(make_request(json_schema=SCHEMA))

        assert "maximum context length" in failed.value.detail
        assert failed.value.retryable is False
        assert route.call_count == 1

    async def test_reply_that_is_not_json_raises_output_invalid(self, respx_mock, make_request):
        respx_mock.post(COMPLETIONS_URL).respond(json=completion("질문을 두 개로 나누면 다음과 같습니다"))

        with pytest.raises(LlmOutputInvalid, match="does not parse"):
            await make_provider().complete(make_request(json_schema=SCHEMA))


class TestOpenAICompatibleStream:
    async def test_stream_parses_sse_deltas_and_the_usage_chunk(self, respx_mock, make_request, payloads):
        events = [
            (None, chunk("제60조에 ")),
            (None, chunk("따르면 ")),
            (None, chunk("")),
            (None, chunk("15일입니다.")),
            (None, chunk(usage={"prompt_tokens": 40, "completion_tokens": 6})),
            (None, "[DONE]"),
        ]
        route = respx_mock.post(COMPLETIONS_URL).respond(
            headers={"content-type": "text/event-stream"}, content=b": keep-alive\n\n" + payloads.sse(events)
        )

        stream = make_provider().stream(make_request())
        deltas = [delta async for delta in stream if delta]  # "" marks progress (chunks without text)

        assert deltas == ["제60조에 ", "따르면 ", "15일입니다."]
        assert stream.response is not None
        assert stream.response.text == "제60조에 따르면 15일입니다."
        assert (stream.response.input_tokens, stream.response.output_tokens) == (40, 6)
        body = sent_body(route)
        assert body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}

    async def test_error_status_before_the_stream_is_a_retryable_failure(self, respx_mock, make_request):
        respx_mock.post(COMPLETIONS_URL).respond(503, text="model is loading")

        with pytest.raises(LlmRequestFailed, match="answered 503") as failed:
            async for _ in make_provider().stream(make_request()):
                pass

        assert failed.value.retryable is True

    async def test_connection_drop_mid_stream_raises_interrupted_with_the_partial_text(
        self, respx_mock, make_request, payloads, sleeps
    ):
        body = payloads.sse([(None, chunk("근로자는 ")), (None, chunk("1년간"))])
        route = respx_mock.post(COMPLETIONS_URL).mock(
            side_effect=lambda request: httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=payloads.ScriptedByteStream([body], error=httpx2.RemoteProtocolError("peer closed")),
            )
        )
        llm = ResilientProvider(make_provider(), sleep=sleeps)

        with pytest.raises(LlmStreamInterrupted) as interrupted:
            async for _ in llm.stream(make_request()):
                pass

        assert interrupted.value.partial_text == "근로자는 1년간"
        assert route.call_count == 1


class TestOpenAICompatibleResilience:
    async def test_a_server_failing_everything_costs_a_bounded_number_of_requests(
        self, respx_mock, make_request, sleeps, clock
    ):
        route = respx_mock.post(COMPLETIONS_URL).respond(500, text="internal error")
        llm = ResilientProvider(
            make_provider(),
            retry=RetryPolicy(max_attempts=3),
            breaker=CircuitBreaker(failure_threshold=5, cooldown_s=30.0, clock=clock),
            sleep=sleeps,
        )

        outcomes: list[str] = []
        for _ in range(20):  # twenty questions while the server is down
            with pytest.raises(LlmUnavailable) as failed:
                await llm.complete(make_request())
            outcomes.append(type(failed.value).__name__)
            try:
                async for _ in llm.stream(make_request()):
                    pass
            except LlmUnavailable as error:
                outcomes.append(type(error).__name__)

        assert route.call_count == 5  # the breaker threshold, not 40 calls × 3 attempts
        assert outcomes[:2] == ["LlmRequestFailed", "LlmUnavailable"]
        assert set(outcomes[2:]) == {"LlmUnavailable"}
        assert len(sleeps.delays) == 3  # backoff only between attempts that were sent
        assert all(delay <= 8.0 for delay in sleeps.delays)


class TestWhatReachesTheLog:
    """Issue 28: a base URL's password and a provider's error body stay out of logged messages."""

    async def test_an_error_body_is_kept_for_the_fallback_but_out_of_the_message(self, respx_mock, make_request):
        echoed = "internal host 10.1.2.3 rejected key sk-live-echoed"
        respx_mock.post(COMPLETIONS_URL).mock(return_value=httpx.Response(401, json={"error": {"message": echoed}}))

        with pytest.raises(LlmRequestFailed) as raised:
            await make_provider().complete(make_request())

        assert "sk-live-echoed" not in str(raised.value)
        assert "401" in str(raised.value)
        assert "sk-live-echoed" in raised.value.detail

    async def test_a_base_url_with_credentials_is_logged_without_its_password(self, respx_mock, make_request,
                                                                               caplog):
        url = "http://user:s3cret-pass@vllm.test/v1/chat/completions"
        respx_mock.post(url).mock(side_effect=[
            httpx.Response(400, json={"error": {"message": "tool_choice is not supported"}}),
            httpx.Response(200, json=completion('{"queries": ["경조휴가"]}')),
        ])

        with caplog.at_level("WARNING"):
            await make_provider(base_url="http://user:s3cret-pass@vllm.test/v1/").complete(
                make_request(json_schema=SCHEMA))

        assert "rejected JSON mode" in caplog.text
        assert "s3cret-pass" not in caplog.text
