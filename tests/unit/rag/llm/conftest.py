"""Fixtures for the LLM provider tests: request factory, fake clock and sleep, SSE bodies."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from rag.llm import LlmRequest
from rag.models import Message, Role
from tests.fakes.clock import FakeClock, RecordedSleeps

LLM_URL = "http://llm.test"


@pytest.fixture(autouse=True)
def _no_anthropic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK reads ANTHROPIC_* (base URL, custom headers) from the environment.
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)


@pytest.fixture
def make_request() -> Callable[..., LlmRequest]:
    def make(question: str = "연차휴가는 며칠인가요?", **overrides: Any) -> LlmRequest:
        fields: dict[str, Any] = {
            "system": "회사 규정에 근거해 답하세요.",
            "messages": (Message(role=Role.USER, content=question),),
            "max_tokens": 200,
        }
        fields.update(overrides)
        return LlmRequest(**fields)

    return make


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    """Server-sent events: each (event name or None, data object or raw string)."""
    lines: list[str] = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        lines.append(f"data: {payload}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def anthropic_message(
    *content: dict[str, Any],
    model: str = "claude-test-fast",
    stop_reason: str = "end_turn",
    input_tokens: int = 12,
    output_tokens: int = 7,
) -> dict[str, Any]:
    """A Messages API response body."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def anthropic_stream_events(
    *deltas: str, model: str = "claude-test-strong", output_tokens: int = 9
) -> list[tuple[str | None, dict[str, Any] | str]]:
    """The events of a streamed text answer, `message_start` first, as the API sends them."""
    start = anthropic_message(model=model, stop_reason=None, input_tokens=21, output_tokens=1)  # type: ignore[arg-type]
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
    ]
    for delta in deltas:
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": delta}},
            )
        )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


class ScriptedByteStream(httpx2.AsyncByteStream):
    """A response body that sends `chunks`, then raises `error` or stalls forever (a silent server)."""

    def __init__(self, chunks: list[bytes], *, error: Exception | None = None, stall: bool = False) -> None:
        self._chunks = chunks
        self._error = error
        self._stall = stall

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk
        if self._error is not None:
            raise self._error
        if self._stall:
            await asyncio.Event().wait()


class Payloads:
    """Builders for fake server bodies, handed to tests as the `payloads` fixture."""

    sse = staticmethod(sse)
    anthropic_message = staticmethod(anthropic_message)
    anthropic_stream_events = staticmethod(anthropic_stream_events)
    ScriptedByteStream = ScriptedByteStream


@pytest.fixture
def payloads() -> type[Payloads]:
    return Payloads
