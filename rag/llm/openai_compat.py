"""OpenAI-compatible chat servers (vLLM, Ollama, LiteLLM …) over plain httpx2; no `openai` package.

JSON output asks for `response_format: json_schema`. A server that rejects it (400/422) is asked
again with `json_object` and the schema written into the system prompt, and this provider keeps
using `json_object` from then on.
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
    is_retryable_status,
    parse_retry_after,
    require_json_object,
)

logger = logging.getLogger(__name__)

JsonMode = Literal["json_schema", "json_object"]

# Appended to the system prompt in json_object mode, where the server does not enforce the schema.
JSON_OBJECT_INSTRUCTION = (
    "\n\nReply with one JSON object only, no prose, matching this JSON Schema:\n{schema}"
)


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
        json_mode: JsonMode = "json_schema",
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """
        Args:
            base_url: `OPENAI_BASE_URL`, including the version path (`http://vllm:8000/v1`).
            fast_model / strong_model: model names for the two request tiers.
            api_key: sent as a bearer token when set (`OPENAI_API_KEY`).
            json_mode: start with `json_schema` (vLLM, recent Ollama) or `json_object`.
            http_client: an httpx2 client to send through; one is created (and owned) otherwise.
        """
        if not base_url:
            raise ConfigError("OPENAI_BASE_URL is required when REGBOT_LLM=openai")
        if not fast_model:
            raise ConfigError("REGBOT_OPENAI_MODEL is required when REGBOT_LLM=openai")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._models = {"fast": fast_model, "strong": strong_model or fast_model}
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._json_mode: JsonMode = json_mode
        self._owns_client = http_client is None
        self._client = http_client or httpx2.AsyncClient()

    @property
    def available(self) -> bool:
        return True

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """One non-streamed completion; with a schema, the reply's JSON becomes `data`."""
        try:
            body = await self._post_json(request)
        except LlmRequestFailed as error:
            if not (
                request.json_schema is not None
                and self._json_mode == "json_schema"
                and _rejects_json_schema(error)
            ):
                raise
            logger.warning("%s rejected response_format json_schema; using json_object", self._url)
            self._json_mode = "json_object"
            body = await self._post_json(request)
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise LlmOutputInvalid(f"the server's reply has no choices[0].message: {error!r}") from error
        data = None
        if request.json_schema is not None:
            data = require_json_object(text, request.json_schema)
        usage = body.get("usage") or {}
        return LlmResponse(
            text=text,
            data=data,
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            model=body.get("model") or self._models[request.tier],
        )

    def stream(self, request: LlmRequest) -> LlmStream:
        """Text deltas parsed from the server-sent events (`data: {...}` … `data: [DONE]`)."""
        if request.json_schema is not None:
            raise ValueError("stream() returns text; use complete() for a JSON schema")
        return LlmStream(self._stream_events(request))

    async def aclose(self) -> None:
        """Close the HTTP client when this provider created it."""
        if self._owns_client:
            await self._client.aclose()

    async def _post_json(self, request: LlmRequest) -> dict[str, Any]:
        try:
            response = await self._client.post(
                self._url,
                json=self._payload(request, stream=False),
                headers=self._headers,
                timeout=request.timeout_s,
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
        parts: list[str] = []
        usage: dict[str, Any] = {}
        model = self._models[request.tier]
        try:
            async with self._client.stream(
                "POST",
                self._url,
                json=self._payload(request, stream=True),
                headers=self._headers,
                timeout=request.timeout_s,
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_failed(response)
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue  # blank separators, comments, `event:` lines
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    chunk = _parse_chunk(data)
                    model = chunk.get("model") or model
                    usage = chunk.get("usage") or usage
                    delta = _delta_text(chunk)
                    if delta:
                        parts.append(delta)
                        yield delta
        except httpx2.TransportError as error:
            raise _transport_failed(error) from error
        yield LlmResponse(
            text="".join(parts),
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            model=model,
        )

    def _payload(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        system = request.system
        payload: dict[str, Any] = {
            "model": self._models[request.tier],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": stream,
        }
        if request.json_schema is not None:
            if self._json_mode == "json_schema":
                payload["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "result", "schema": request.json_schema},
                }
            else:
                payload["response_format"] = {"type": "json_object"}
                schema_text = json.dumps(request.json_schema, ensure_ascii=False)
                system += JSON_OBJECT_INSTRUCTION.format(schema=schema_text)
        if stream:
            # vLLM and Ollama send token usage in a last chunk only when asked.
            payload["stream_options"] = {"include_usage": True}
        messages = [{"role": "system", "content": system}] if system else []
        messages += [{"role": m.role.value, "content": m.content} for m in request.messages]
        payload["messages"] = messages
        return payload


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


def _rejects_json_schema(error: LlmRequestFailed) -> bool:
    """A 400/422 that names the response format, not a prompt that is too long."""
    reason = str(error)
    return error.status_code in (400, 422) and ("response_format" in reason or "json_schema" in reason)


def _status_failed(response: httpx2.Response) -> LlmRequestFailed:
    # The body of an error names its cause (model missing, unsupported response_format …).
    detail = response.text[:300].replace("\n", " ")
    return LlmRequestFailed(
        f"the OpenAI-compatible server answered {response.status_code}: {detail}",
        retryable=is_retryable_status(response.status_code),
        status_code=response.status_code,
        retry_after_s=parse_retry_after(response.headers),
    )


def _transport_failed(error: httpx2.TransportError) -> LlmRequestFailed:
    kind = "timed out" if isinstance(error, httpx2.TimeoutException) else "connection failed"
    return LlmRequestFailed(f"the OpenAI-compatible server {kind}: {type(error).__name__}", retryable=True)
