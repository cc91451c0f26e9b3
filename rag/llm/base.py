"""The LLM provider protocol, its request and response models, and the errors providers raise.

Every provider translates its own SDK or HTTP errors into this tree, so the resilience layer and
the stages never see a vendor exception:

    LlmUnavailable (rag.errors)
     ├── LlmRequestFailed      a call failed; `retryable` says whether trying again may help, `hung`
     │                         that nothing at all arrived in time (connect, first byte, between events)
     ├── LlmOutputInvalid      the model answered, but not with what the request asked for (JSON that
     │                         does not parse or fit, an empty stream, a body that is not the API's)
     ├── LlmBudgetExhausted    the question has spent its LLM calls (rag.llm.resilience)
     └── LlmStreamInterrupted  a stream broke off after some text (rag.errors)
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from rag.errors import LlmUnavailable
from rag.models import Message

Tier = Literal["fast", "strong"]


class ToolSpec(BaseModel):
    """A tool the model may call while answering: its name, what it does, and its input's JSON Schema."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str
    input_schema: dict[str, Any]


class ToolCall(BaseModel):
    """One tool call the model made; `arguments` is its parsed input."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolExchange(BaseModel):
    """One finished tool round: what the model said and called, and what each call returned (same order)."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    calls: tuple[ToolCall, ...]
    results: tuple[str, ...]


class LlmRequest(BaseModel):
    """One completion request, independent of the provider.

    `tier` picks the model: `fast` for small structured stages (route, plan, grade), `strong` for the
    answer. With `json_schema` set, `complete()` returns the parsed object in `LlmResponse.data`.
    `timeout_s` is the hang timeout: it bounds one attempt of `complete()`, and for `stream()` the wait
    for the first and each later delta. `deadline_s` bounds the whole call, retries included.
    `stage` names the caller for usage counters. `tools` are offered to the model (`stream()` only);
    `exchanges` are the tool rounds so far, sent after `messages`.
    `temperature` reaches OpenAI-compatible servers only; the Anthropic API no longer accepts it.
    """

    model_config = ConfigDict(frozen=True)

    system: str = ""
    messages: tuple[Message, ...] = Field(min_length=1)
    max_tokens: int = Field(1024, gt=0)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    tier: Tier = "fast"
    json_schema: dict[str, Any] | None = None
    timeout_s: float = Field(30.0, gt=0)
    deadline_s: float | None = Field(None, gt=0)
    stage: str = ""
    tools: tuple[ToolSpec, ...] = ()
    exchanges: tuple[ToolExchange, ...] = ()


class LlmResponse(BaseModel):
    """What a completion produced; `data` is the parsed JSON object when the request had a schema."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    data: dict[str, Any] | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    tool_calls: tuple[ToolCall, ...] = ()  # calls the model made instead of (or after) text


def redact_url(url: str) -> str:
    """The URL without its password (`redis://:secret@host` → `redis://:***@host`), for logs and start-up lines."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class LlmRequestFailed(LlmUnavailable):
    """A provider call failed. `retryable` is True for rate limits, overload, 5xx, timeouts and
    connection errors; `retry_after_s` is the server's hint, when it gave one; `hung` is True when
    nothing arrived within the hang timeout (the breaker opens at once on a hang)."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        status_code: int | None = None,
        retry_after_s: float | None = None,
        hung: bool = False,
        detail: str = "",
    ) -> None:
        super().__init__(reason)
        # What the provider's error body said: read to choose a fallback, never part of the logged message
        # (a provider may echo the prompt, a key or an internal address back).
        self.detail = detail
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after_s = retry_after_s
        self.hung = hung


class LlmOutputInvalid(LlmUnavailable):
    """The model's reply is not the JSON object the request's schema asks for; use the offline path."""


class LlmStream(AsyncIterator[str]):
    """The text deltas of one streamed completion.

    Iterate it for the deltas; once it is exhausted, `response` holds the whole text, the token
    usage and the model. Call `aclose()` when you stop early, so the connection is released.
    """

    def __init__(self, events: AsyncIterator[str | LlmResponse]) -> None:
        # `events` yields text deltas and, last, the LlmResponse that sums them up.
        self._events = events
        self.response: LlmResponse | None = None

    def __aiter__(self) -> LlmStream:
        return self

    async def __anext__(self) -> str:
        while True:
            event = await self._events.__anext__()
            if isinstance(event, LlmResponse):
                self.response = event
                continue
            return event

    async def aclose(self) -> None:
        aclose = getattr(self._events, "aclose", None)
        if aclose is not None:
            await aclose()


@runtime_checkable
class LlmProvider(Protocol):
    """A chat model. Implementations raise only `LlmUnavailable` and its subclasses."""

    name: str

    @property
    def available(self) -> bool:
        """False when calling now is pointless (not configured, or the circuit breaker is open)."""
        ...

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Return the whole completion; with `request.json_schema` set, `data` holds the object."""
        ...

    def stream(self, request: LlmRequest) -> LlmStream:
        """Return the completion as text deltas ("" for an event without text: progress); with
        `request.json_schema`, no text and the object in `response.data` at the end."""
        ...


RETRYABLE_STATUS_CODES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def is_retryable_status(status_code: int) -> bool:
    """Rate limits, overload (529), timeouts and server errors may pass on a later attempt."""
    return status_code in RETRYABLE_STATUS_CODES or status_code >= 500


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None if absent."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(moment.timestamp() - time.time(), 0.0)


def require_json_object(value: object, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return `value` as a JSON object holding the schema's top-level required keys.

    Deeper validation belongs to the stage's pydantic model; this catches truncated or empty output.
    """
    if isinstance(value, str):
        try:
            value = json.loads(strip_code_fence(value))
        except json.JSONDecodeError as error:
            raise LlmOutputInvalid(f"the model's JSON does not parse: {error}") from error
    if not isinstance(value, dict):
        raise LlmOutputInvalid(f"the model returned {type(value).__name__}, not a JSON object")
    missing = [key for key in schema.get("required", ()) if key not in value]
    if missing:
        raise LlmOutputInvalid(f"the model's JSON lacks required keys: {', '.join(missing)}")
    return value


def strip_code_fence(text: str) -> str:
    """Small models wrap JSON in ```json fences even when told not to."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        if stripped.rstrip().endswith("```"):
            stripped = stripped.rstrip()[:-3]
    return stripped.strip()
