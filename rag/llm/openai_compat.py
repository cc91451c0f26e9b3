"""OpenAI-compatible chat servers (vLLM, Ollama, LiteLLM …) over plain httpx2; no `openai` package.

JSON output is asked for the way the stages' prompts say ("record_result 도구로만 답하세요"): one
function tool `record_result` whose parameters are the schema, forced with a named `tool_choice`. A
server that rejects tools (400/422 naming them) is asked again with `response_format: json_schema`,
and one that rejects that with `json_object`; the system prompt then says to answer with the JSON
object instead of the tool. The provider keeps the mode that worked. A server that ignores
`tool_choice` and answers in `content` (older Ollama) is read from the content.
Agent tools go out as `tools` with `tool_choice: auto`; streamed `tool_calls` deltas are joined.
The tested request shapes are in docs/llm.md.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

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
    redact_url,
    require_json_object,
)

logger = logging.getLogger(__name__)

JsonMode = Literal["tool", "json_schema", "json_object"]
JSON_TOOL_NAME = "record_result"
JSON_TOOL_DESCRIPTION = "Record the result. Always call this tool; its input is the whole answer."

# Appended to the system prompt when the server takes no tools: the prompt's "record_result 도구" becomes a JSON object.
JSON_MODE_INSTRUCTION = (
    "\n\n(이 서버에는 도구가 없습니다. record_result 도구 대신, 그 입력이 될 JSON 객체 하나만 답하세요.)"
)
# Also in json_object mode, where the server does not enforce the schema.
JSON_OBJECT_INSTRUCTION = "\nReply with one JSON object only, no prose, matching this JSON Schema:\n{schema}"


class OpenAICompatibleProvider:
    """A `/chat/completions` server; `strong_model` defaults to `fast_model` (one local model)."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        fast_model: str,
        strong_model: str = "",
        api_key: str = "",
        json_mode: JsonMode = "tool",
        http_client: httpx2.AsyncClient | None = None,
        connect_timeout_s: float = 3.0,
    ) -> None:
        """
        Args:
            base_url: `OPENAI_BASE_URL`, including the version path (`http://vllm:8000/v1`).
            fast_model / strong_model: model names for the two request tiers.
            api_key: sent as a bearer token when set (`OPENAI_API_KEY`).
            json_mode: start with the forced `tool` (default), `json_schema` or `json_object`.
            http_client: an httpx2 client to send through; one is created (and owned) otherwise.
            connect_timeout_s: how long a connection may take before the call counts as hung.
        """
        if not base_url:
            raise ConfigError("OPENAI_BASE_URL is required when REGBOT_LLM=openai")
        if not fast_model:
            raise ConfigError("REGBOT_OPENAI_MODEL is required when REGBOT_LLM=openai")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._shown_url = redact_url(self._url)  # what logs name: no password of a base URL with credentials
        self._models = {"fast": fast_model, "strong": strong_model or fast_model}
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._json_mode: JsonMode = json_mode
        self._connect_timeout_s = connect_timeout_s
        self._owns_client = http_client is None
        self._client = http_client or httpx2.AsyncClient()

    @property
    def available(self) -> bool:
        return True

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """One non-streamed completion; with a schema, the reply's JSON becomes `data`."""
        while True:
            mode = self._json_mode
            try:
                body = await self._post_json(request)
                break
            except LlmRequestFailed as error:
                self._next_json_mode(request, mode, error)
        try:
            message = body["choices"][0]["message"]
            text = message.get("content") or ""
            raw_calls = message.get("tool_calls") or []
            usage = body.get("usage") or {}
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise LlmOutputInvalid(f"the server's reply has no choices[0].message: {error!r}") from error
        calls = _tool_calls(raw_calls)
        data = None
        if request.json_schema is not None:
            forced = next((c for c in calls if c.name == JSON_TOOL_NAME), None)
            # A server that ignored tool_choice may still have answered with the JSON as text.
            data = require_json_object(forced.arguments if forced else text, request.json_schema)
            calls = ()
        return LlmResponse(
            text=text,
            data=data,
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            model=body.get("model") or self._models[request.tier],
            tool_calls=calls,
        )

    def stream(self, request: LlmRequest) -> LlmStream:
        """Text deltas parsed from the server-sent events (`data: {...}` … `data: [DONE]`); an empty delta for
        an event without text (progress). With a JSON schema the object ends up in `response.data`."""
        return LlmStream(self._stream_events(request))

    async def aclose(self) -> None:
        """Close the HTTP client when this provider created it."""
        if self._owns_client:
            await self._client.aclose()

    def _timeout(self, request: LlmRequest) -> httpx2.Timeout:
        # read = idle time between bytes: for a stream that is the hang timeout of each event.
        return httpx2.Timeout(request.timeout_s, connect=min(self._connect_timeout_s, request.timeout_s))

    def _next_json_mode(self, request: LlmRequest, mode: JsonMode, error: LlmRequestFailed) -> None:
        """After the server refused JSON mode `mode`: use the next one for this and later calls, or raise `error`
        when there is none (or the request asked for no JSON)."""
        fallback = _next_json_mode(mode, error) if request.json_schema is not None else None
        if fallback is None:
            raise error
        logger.warning("%s rejected JSON mode %s; using %s", self._shown_url, mode, fallback)
        self._json_mode = fallback

    async def _post_json(self, request: LlmRequest) -> dict[str, Any]:
        try:
            response = await self._client.post(
                self._url,
                json=self._payload(request, stream=False),
                headers=self._headers,
                timeout=self._timeout(request),
            )
        except httpx2.TransportError as error:
            raise _transport_failed(error) from error
        if response.status_code >= 400:
            raise _status_failed(response)
        try:
            body = response.json()
        except ValueError as error:
            raise LlmOutputInvalid("the server's reply is not JSON") from error
        if not isinstance(body, dict):
            raise LlmOutputInvalid("the server's reply is not a JSON object")
        return body

    async def _stream_events(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        while True:
            mode = self._json_mode
            events = self._stream_once(request)
            try:
                first = await anext(events)
            except LlmRequestFailed as error:
                self._next_json_mode(request, mode, error)
                continue
            break
        final: LlmResponse | None = first if isinstance(first, LlmResponse) else None
        if final is None:
            yield first
            async for event in events:
                if isinstance(event, LlmResponse):
                    final = event
                else:
                    yield event
        assert final is not None
        if request.json_schema is not None:
            forced = next((c for c in final.tool_calls if c.name == JSON_TOOL_NAME), None)
            data = require_json_object(forced.arguments if forced else final.text, request.json_schema)
            final = final.model_copy(update={"data": data, "tool_calls": ()})
        yield final

    async def _stream_once(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        parts: list[str] = []
        usage: dict[str, Any] = {}
        model = self._models[request.tier]
        calls: dict[int, dict[str, str]] = {}
        finished = False
        try:
            async with self._client.stream(
                "POST",
                self._url,
                json=self._payload(request, stream=True),
                headers=self._headers,
                timeout=self._timeout(request),
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_failed(response)
                if "json" in response.headers.get("content-type", "") and "stream" not in response.headers.get(
                        "content-type", ""):
                    await response.aread()
                    raise LlmOutputInvalid("the server answered a stream request with a JSON body, not events")
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue  # blank separators, comments, `event:` lines
                    data = line[5:].strip()
                    if data == "[DONE]":
                        finished = True
                        break
                    chunk = _parse_chunk(data)
                    model = chunk.get("model") or model
                    usage = chunk.get("usage") or usage
                    finished = finished or _finish_reason(chunk) is not None
                    _collect_tool_deltas(chunk, calls)
                    delta = _delta_text(chunk)
                    parts.append(delta)
                    # JSON text is not for the user; "" still says the server is alive (progress).
                    yield delta if request.json_schema is None else ""
        except httpx2.TransportError as error:
            raise _transport_failed(error) from error
        if not finished:
            # Neither [DONE] nor a finish_reason: the connection closed mid-answer.
            raise LlmRequestFailed("the OpenAI-compatible stream ended before it finished (truncated)",
                                   retryable=True)
        yield LlmResponse(
            text="".join(parts),
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            model=model,
            tool_calls=_tool_calls([{"id": c.get("id", ""), "function": {"name": c.get("name", ""),
                                     "arguments": c.get("arguments", "")}} for _, c in sorted(calls.items())]),
        )

    def _payload(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        system = request.system
        payload: dict[str, Any] = {
            "model": self._models[request.tier],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": stream,
        }
        if request.tools and request.json_schema is not None:
            raise ValueError("a request has either tools or a json_schema")
        if request.json_schema is not None:
            if self._json_mode == "tool":
                payload["tools"] = [_function(JSON_TOOL_NAME, JSON_TOOL_DESCRIPTION, request.json_schema)]
                payload["tool_choice"] = {"type": "function", "function": {"name": JSON_TOOL_NAME}}
            elif self._json_mode == "json_schema":
                payload["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": JSON_TOOL_NAME, "schema": request.json_schema},
                }
                system += JSON_MODE_INSTRUCTION
            else:
                payload["response_format"] = {"type": "json_object"}
                schema_text = json.dumps(request.json_schema, ensure_ascii=False)
                system += JSON_MODE_INSTRUCTION + JSON_OBJECT_INSTRUCTION.format(schema=schema_text)
        if request.tools:
            payload["tools"] = [_function(t.name, t.description, t.input_schema) for t in request.tools]
            payload["tool_choice"] = "auto"
        if stream:
            # vLLM and Ollama send token usage in a last chunk only when asked.
            payload["stream_options"] = {"include_usage": True}
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages += [{"role": m.role.value, "content": m.content} for m in request.messages]
        for exchange in request.exchanges:
            messages.append({"role": "assistant", "content": exchange.text or None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                for c in exchange.calls]})
            messages += [{"role": "tool", "tool_call_id": c.id, "content": result}
                         for c, result in zip(exchange.calls, exchange.results, strict=True)]
        payload["messages"] = messages
        return payload


def _function(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


def _tool_calls(raw: list[Any]) -> tuple[ToolCall, ...]:
    """Tool calls from `message.tool_calls` (arguments are a JSON string); unreadable ones are dropped."""
    calls: list[ToolCall] = []
    for number, item in enumerate(raw):
        try:
            function = item["function"]
            arguments = function.get("arguments") or "{}"
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError):
            logger.warning("a tool call from the server could not be read; ignored")
            continue
        if isinstance(parsed, dict) and function.get("name"):
            calls.append(ToolCall(id=item.get("id") or f"call_{number}", name=function["name"], arguments=parsed))
    return tuple(calls)


def _collect_tool_deltas(chunk: dict[str, Any], calls: dict[int, dict[str, str]]) -> None:
    """Join streamed `tool_calls` fragments by their index (id and name come once, arguments in pieces)."""
    choices = chunk.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return
    for fragment in (choices[0].get("delta") or {}).get("tool_calls") or []:
        if not isinstance(fragment, dict):
            continue
        call = calls.setdefault(int(fragment.get("index") or 0), {})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["name"] = function["name"]
        call["arguments"] = call.get("arguments", "") + (function.get("arguments") or "")


def _finish_reason(chunk: dict[str, Any]) -> str | None:
    choices = chunk.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return None
    return choices[0].get("finish_reason")


def _parse_chunk(data: str) -> dict[str, Any]:
    """One `data:` payload of the stream as a JSON object."""
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as error:
        raise LlmOutputInvalid(f"the server sent an event that is not JSON: {data[:80]!r}") from error
    if not isinstance(chunk, dict):
        raise LlmOutputInvalid(f"the server sent an event that is not an object: {data[:80]!r}")
    if "error" in chunk:
        # vLLM reports a failure inside the stream, after answering 200.
        raise LlmRequestFailed(f"the server reported an error mid-stream: {chunk['error']!r}", retryable=True)
    return chunk


def _delta_text(chunk: dict[str, Any]) -> str:
    choices = chunk.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return ""
    delta = choices[0].get("delta") or {}
    return delta.get("content") or ""


def _next_json_mode(mode: JsonMode, error: LlmRequestFailed) -> JsonMode | None:
    """The next JSON mode after a 400/422 that names the feature (not a prompt that is too long); None to give up."""
    if error.status_code not in (400, 422):
        return None
    reason = error.detail.lower()
    if mode == "tool" and any(word in reason for word in ("tool", "function")):
        return "json_schema"
    if mode == "json_schema" and ("response_format" in reason or "json_schema" in reason):
        return "json_object"
    return None


def _status_failed(response: httpx2.Response) -> LlmRequestFailed:
    # The body of an error names its cause (model missing, unsupported response_format …): kept on the error
    # for the JSON-mode fallback, out of its message, which is logged.
    detail = response.text[:300].replace("\n", " ")
    return LlmRequestFailed(
        f"the OpenAI-compatible server answered {response.status_code}",
        detail=detail,
        retryable=is_retryable_status(response.status_code),
        status_code=response.status_code,
        retry_after_s=parse_retry_after(response.headers),
    )


def _transport_failed(error: httpx2.TransportError) -> LlmRequestFailed:
    hung = isinstance(error, httpx2.TimeoutException)
    kind = "timed out" if hung else "connection failed"
    return LlmRequestFailed(f"the OpenAI-compatible server {kind}: {type(error).__name__}", retryable=True, hung=hung)
