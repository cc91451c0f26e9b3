"""Fixtures for the stage tests: a scripted LLM provider and the sample corpus (Kiwi loaded once per session)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from rag.llm import LlmRequest, LlmResponse, LlmStream, LlmStreamInterrupted, LlmUnavailable, ToolCall


class ScriptedLlm:
    """An `LlmProvider` that replays scripted replies and records every request.

    `replies` feeds `complete()`: a dict becomes `LlmResponse.data`, a str `.text`, an exception is raised.
    `streams` feeds `stream()`: a list of deltas, optionally followed by an exception raised after them;
    a `ToolCall` in the list is a tool call the model makes in that round (reported in the final response).
    """

    name = "scripted"

    def __init__(self, *, replies: list[Any] | None = None, streams: list[list[Any]] | None = None,
                 available: bool = True) -> None:
        self.replies = list(replies or [])
        self.streams = list(streams or [])
        self.requests: list[LlmRequest] = []
        self._available = available

    @property
    def available(self) -> bool:
        return self._available

    async def complete(self, request: LlmRequest) -> LlmResponse:
        self.requests.append(request)
        if not self.replies:
            raise LlmUnavailable("no scripted reply left")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, dict):
            return LlmResponse(data=reply)
        return LlmResponse(text=reply)

    def stream(self, request: LlmRequest) -> LlmStream:
        if request.json_schema is not None:
            return self._structured(request)
        self.requests.append(request)
        script = self.streams.pop(0) if self.streams else [LlmUnavailable("no scripted stream left")]

        async def events() -> AsyncIterator[str | LlmResponse]:
            shown: list[str] = []
            calls = tuple(item for item in script if isinstance(item, ToolCall))
            for item in script:
                if isinstance(item, ToolCall):
                    continue
                if isinstance(item, Exception):
                    if shown:
                        raise LlmStreamInterrupted("".join(shown), str(item))
                    raise item
                shown.append(item)
                yield item
            yield LlmResponse(text="".join(shown), tool_calls=calls)

        return LlmStream(events())


    def _structured(self, request: LlmRequest) -> LlmStream:
        """A structured call streams progress only; its reply comes from `replies`, as for `complete()`."""

        async def events() -> AsyncIterator[str | LlmResponse]:
            yield ""
            yield await self.complete(request)

        return LlmStream(events())


@pytest.fixture
def scripted_llm():
    return ScriptedLlm


@pytest.fixture(scope="session")
def samples(sample_components):
    """The bundled sample regulations, indexed once: corpus, lookup, retriever and Kiwi tokenizer."""
    return sample_components
