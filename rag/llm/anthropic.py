"""Claude through the official SDK (`anthropic.AsyncAnthropic`, which sends over httpx2).

JSON output uses tool use: one tool whose `input_schema` is the request's schema, forced with
`tool_choice`, so the model must answer with an object the API has already parsed.
The SDK's own retries are off (`max_retries=0`): `ResilientProvider` retries, with a breaker.
`LlmRequest.temperature` is not sent: the API version SDK 2.x speaks rejects sampling parameters.
Agent tools (`LlmRequest.tools`) are sent as ordinary tools with `tool_choice: auto`; earlier rounds
(`LlmRequest.exchanges`) become `tool_use` / `tool_result` blocks.

The SDK raises more than its `APIError` tree (a 200 body that is not JSON gives `JSONDecodeError`, an
empty stream an `AssertionError`): every exception out of it becomes `LlmRequestFailed` here, and the
SDK itself is imported only when this provider is built.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx2

from rag.errors import ConfigError
from rag.llm.base import (
    LlmOutputInvalid,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
    ToolCall,
    is_retryable_status,
    parse_retry_after,
    require_json_object,
)

if TYPE_CHECKING:
    import anthropic

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
        connect_timeout_s: float = 3.0,
    ) -> None:
        """
        Args:
            api_key: the API key (`ANTHROPIC_API_KEY`); required.
            base_url: `ANTHROPIC_BASE_URL`; empty or None lets the SDK use its default.
            fast_model / strong_model: model names for the two request tiers.
            http_client: an httpx2 client to send through (tests inject a mock transport).
            connect_timeout_s: how long a connection may take before the call counts as hung.
        """
        if not api_key:
            raise ConfigError("ANTHROPIC_API_KEY is required when REGBOT_LLM=anthropic")
        if not fast_model or not strong_model:
            raise ConfigError("both the fast and the strong Anthropic model names must be set")
        import anthropic  # ~1.3 s: only when the Anthropic provider is configured

        self._sdk = anthropic
        self._connect_timeout_s = connect_timeout_s
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
            text = "".join(block.text for block in message.content if block.type == "text")
            usage = (message.usage.input_tokens, message.usage.output_tokens)
        except Exception as error:  # the SDK's errors are not one tree (see the module docstring)
            raise self._failed(error) from error
        data = None
        if request.json_schema is not None:
            data = _tool_input(message, request.json_schema)
        return LlmResponse(
            text=text,
            data=data,
            input_tokens=usage[0],
            output_tokens=usage[1],
            model=message.model,
            tool_calls=_tool_calls(message),
        )

    def stream(self, request: LlmRequest) -> LlmStream:
        """Text deltas through the SDK's `messages.stream`; an empty delta for every other event (progress).

        With a JSON schema the forced tool's input arrives as events and ends up in `response.data`: a
        structured call streamed this way tells a hung server (no event) from a slow one (events arriving).
        """
        return LlmStream(self._stream_events(request))

    async def aclose(self) -> None:
        """Close the SDK's HTTP client (an injected client is left to its owner)."""
        await self._client.close()

    async def _stream_events(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        try:
            async with self._client.messages.stream(**self._message_params(request)) as stream:
                async for event in stream:
                    text = event.text if event.type == "text" and request.json_schema is None else ""
                    yield text  # "" is progress: the server is alive, the hang timeout starts again
                message = await stream.get_final_message()
            final = LlmResponse(
                text="".join(block.text for block in message.content if block.type == "text"),
                input_tokens=message.usage.input_tokens,
                output_tokens=message.usage.output_tokens,
                model=message.model,
                tool_calls=_tool_calls(message),
            )
        except Exception as error:  # the SDK's errors are not one tree (see the module docstring)
            raise self._failed(error) from error
        if message.stop_reason is None:
            raise LlmRequestFailed("the Anthropic stream ended before message_stop (truncated)", retryable=True)
        if request.json_schema is not None:
            final = final.model_copy(update={"data": _tool_input(message, request.json_schema)})
        yield final

    def _failed(self, error: Exception) -> LlmRequestFailed | LlmOutputInvalid:
        sdk = self._sdk
        if isinstance(error, (LlmRequestFailed, LlmOutputInvalid)):
            return error
        if isinstance(error, sdk.APIError):
            return _request_failed(sdk, error)
        if isinstance(error, httpx2.TimeoutException):
            return LlmRequestFailed(f"Anthropic timed out: {type(error).__name__}", retryable=True, hung=True)
        if isinstance(error, httpx2.TransportError):
            return _transport_failed(error)
        # A 200 whose body is not the API's (an HTML page from a proxy, an empty or cut stream).
        return LlmOutputInvalid(f"Anthropic sent a reply the SDK could not read: {type(error).__name__}")

    def _message_params(self, request: LlmRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._models[request.tier],
            "max_tokens": request.max_tokens,
            # No temperature: API version 2026-10-21 (SDK 2.x) rejects every sampling parameter.
            "messages": [{"role": m.role.value, "content": m.content} for m in request.messages],
            "timeout": httpx2.Timeout(request.timeout_s, connect=min(self._connect_timeout_s, request.timeout_s)),
        }
        for exchange in request.exchanges:
            assistant: list[dict[str, Any]] = [{"type": "text", "text": exchange.text}] if exchange.text else []
            assistant += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                          for c in exchange.calls]
            params["messages"].append({"role": "assistant", "content": assistant})
            params["messages"].append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": c.id, "content": result}
                for c, result in zip(exchange.calls, exchange.results, strict=True)]})
        if request.system:
            params["system"] = request.system
        if request.tools:
            if request.json_schema is not None:
                raise ValueError("a request has either tools or a json_schema")
            params["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                               for t in request.tools]
            params["tool_choice"] = {"type": "auto"}
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


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(id=b.id, name=b.name, arguments=b.input if isinstance(b.input, dict) else {})
                 for b in message.content if b.type == "tool_use" and b.name != JSON_TOOL_NAME)


def _request_failed(anthropic: Any, error: anthropic.APIError) -> LlmRequestFailed:
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
        if isinstance(error, anthropic.APITimeoutError):
            return LlmRequestFailed("Anthropic timed out (nothing received)", retryable=True, hung=True)
        return LlmRequestFailed("Anthropic could not connect", retryable=True)
    # A response the SDK could not validate: asking again rarely helps.
    return LlmRequestFailed(f"Anthropic call failed: {type(error).__name__}", retryable=False)


def _transport_failed(error: httpx2.TransportError) -> LlmRequestFailed:
    # Raised by the SDK while reading a stream, after the request itself succeeded.
    return LlmRequestFailed(f"Anthropic connection broke: {type(error).__name__}", retryable=True)
