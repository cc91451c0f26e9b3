"""Claude through the official SDK (`anthropic.AsyncAnthropic`, which sends over httpx2).

JSON output uses tool use: one tool whose `input_schema` is the request's schema, forced with
`tool_choice`, so the model must answer with an object the API has already parsed.
The SDK's own retries are off (`max_retries=0`): `ResilientProvider` retries, with a breaker.
`LlmRequest.temperature` is not sent: the API version SDK 2.x speaks rejects sampling parameters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from rag.errors import ConfigError
from rag.llm.base import (
    LlmOutputInvalid,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
    is_retryable_status,
    parse_retry_after,
    require_json_object,
)

JSON_TOOL_NAME = "record_result"
JSON_TOOL_DESCRIPTION = "Record the result. Always call this tool; its input is the whole answer."

# Error types the API sends in a mid-stream `error` event (HTTP status 200) that may pass on retry.
_RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class AnthropicProvider:
    """Claude models: `fast_model` for structured stages, `strong_model` for answers."""

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        fast_model: str = "claude-haiku-4-5",
        strong_model: str = "claude-sonnet-4-5",
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """
        Args:
            api_key: the API key (`ANTHROPIC_API_KEY`); required.
            base_url: `ANTHROPIC_BASE_URL`; empty or None lets the SDK use its default.
            fast_model / strong_model: model names for the two request tiers.
            http_client: an httpx2 client to send through (tests inject a mock transport).
        """
        if not api_key:
            raise ConfigError("ANTHROPIC_API_KEY is required when REGBOT_LLM=anthropic")
        if not fast_model or not strong_model:
            raise ConfigError("both the fast and the strong Anthropic model names must be set")
        self._models = {"fast": fast_model, "strong": strong_model}
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def available(self) -> bool:
        return True

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """One Messages API call; with a schema, the forced tool's input becomes `data`."""
        try:
            message = await self._client.messages.create(**self._message_params(request))
        except anthropic.APIError as error:
            raise _request_failed(error) from error
        except httpx2.TransportError as error:
            raise _transport_failed(error) from error
        text = "".join(block.text for block in message.content if block.type == "text")
        data = None
        if request.json_schema is not None:
            data = _tool_input(message, request.json_schema)
        return LlmResponse(
            text=text,
            data=data,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            model=message.model,
        )

    def stream(self, request: LlmRequest) -> LlmStream:
        """Text deltas through the SDK's `messages.stream`."""
        if request.json_schema is not None:
            raise ValueError("stream() returns text; use complete() for a JSON schema")
        return LlmStream(self._stream_events(request))

    async def aclose(self) -> None:
        """Close the SDK's HTTP client (an injected client is left to its owner)."""
        await self._client.close()

    async def _stream_events(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        try:
            async with self._client.messages.stream(**self._message_params(request)) as stream:
                async for text in stream.text_stream:
                    if text:
                        yield text
                message = await stream.get_final_message()
        except anthropic.APIError as error:
            raise _request_failed(error) from error
        except httpx2.TransportError as error:
            raise _transport_failed(error) from error
        yield LlmResponse(
            text="".join(block.text for block in message.content if block.type == "text"),
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            model=message.model,
        )

    def _message_params(self, request: LlmRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._models[request.tier],
            "max_tokens": request.max_tokens,
            # No temperature: API version 2026-10-21 (SDK 2.x) rejects every sampling parameter.
            "messages": [{"role": m.role.value, "content": m.content} for m in request.messages],
            "timeout": request.timeout_s,
        }
        if request.system:
            params["system"] = request.system
        if request.json_schema is not None:
            params["tools"] = [
                {
                    "name": JSON_TOOL_NAME,
                    "description": JSON_TOOL_DESCRIPTION,
                    "input_schema": request.json_schema,
                }
            ]
            params["tool_choice"] = {"type": "tool", "name": JSON_TOOL_NAME}
        return params


def _tool_input(message: Any, schema: dict[str, Any]) -> dict[str, Any]:
    for block in message.content:
        if block.type == "tool_use" and block.name == JSON_TOOL_NAME:
            return require_json_object(block.input, schema)
    raise LlmOutputInvalid(
        f"the model did not call {JSON_TOOL_NAME} (stop_reason={message.stop_reason}); no JSON to read"
    )


def _request_failed(error: anthropic.APIError) -> LlmRequestFailed:
    if isinstance(error, anthropic.APIStatusError):
        headers = error.response.headers
        should_retry = headers.get("x-should-retry")
        if should_retry in ("true", "false"):
            retryable = should_retry == "true"
        else:
            retryable = is_retryable_status(error.status_code) or error.type in _RETRYABLE_ERROR_TYPES
        return LlmRequestFailed(
            f"Anthropic answered {error.status_code} ({error.type or 'no error type'})",
            retryable=retryable,
            status_code=error.status_code,
            retry_after_s=parse_retry_after(headers),
        )
    if isinstance(error, anthropic.APIConnectionError):
        kind = "timed out" if isinstance(error, anthropic.APITimeoutError) else "could not connect"
        return LlmRequestFailed(f"Anthropic {kind}", retryable=True)
    # A response the SDK could not validate: asking again rarely helps.
    return LlmRequestFailed(f"Anthropic call failed: {type(error).__name__}", retryable=False)


def _transport_failed(error: httpx2.TransportError) -> LlmRequestFailed:
    # Raised by the SDK while reading a stream, after the request itself succeeded.
    return LlmRequestFailed(f"Anthropic connection broke: {type(error).__name__}", retryable=True)
