"""A scripted fake of both LLM APIs regbot speaks (Anthropic Messages, OpenAI-compatible chat completions).

Each stage's request is told apart by its system prompt; a test scripts what each stage's calls get as abstract
`Reply`s, rendered in the API's own wire format (JSON or server-sent events). Served through respx (`handler`)
for tests, and by an aiohttp app on 127.0.0.1 (`aiohttp_app`) for `benchmarks/llm_faults.py`.
An unscripted call answers 500.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2

from rag.retrieval.rerank import LISTWISE_PROMPT
from rag.stages.followups import FOLLOWUP_PROMPT
from rag.stages.generator import GENERATE_PROMPT
from rag.stages.grader import GRADE_PROMPT
from rag.stages.rewriter import REWRITE_PROMPT
from rag.stages.understanding import UNDERSTAND_PROMPT
from rag.stages.verifier import VERIFY_PROMPT

Api = Literal["anthropic", "openai"]
ANTHROPIC_URL = "http://llm.test/v1/messages"
OPENAI_BASE_URL = "http://llm.test/v1"
OPENAI_URL = f"{OPENAI_BASE_URL}/chat/completions"

STAGES_BY_PROMPT = {UNDERSTAND_PROMPT: "understand", GRADE_PROMPT: "grade", REWRITE_PROMPT: "rewrite",
                    VERIFY_PROMPT: "verify", FOLLOWUP_PROMPT: "followups", LISTWISE_PROMPT: "rerank"}

ReplyKind = Literal["json", "stream", "tools", "non_json", "empty_stream", "truncated", "stalled", "hang", "status"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `deltas` for streams, `data` for JSON stages, `calls` for tool calls."""

    kind: ReplyKind
    data: dict[str, Any] = field(default_factory=dict)
    deltas: tuple[str, ...] = ()
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def as_json(data: dict[str, Any]) -> Reply:
    return Reply("json", data=data)


def streamed(*deltas: str) -> Reply:
    return Reply("stream", deltas=deltas)


def tool_calls(*calls: tuple[str, dict[str, Any]], text: str = "") -> Reply:
    return Reply("tools", calls=calls, deltas=(text,) if text else ())


def status(code: int, headers: dict[str, str] | None = None, error_type: str = "api_error") -> Reply:
    """An error reply; `error_type` is the Messages API's (rate_limit_error, invalid_request_error, …)."""
    return Reply("status", status=code, headers=headers or {}, data={"error_type": error_type})


def stalls_after(*deltas: str) -> Reply:
    """A stream that sends these deltas, then never another byte (a server that went silent mid-answer)."""
    return Reply("stalled", deltas=deltas)


NON_JSON = Reply("non_json")
EMPTY_STREAM = Reply("empty_stream")
HANG = Reply("hang")


def stage_of(api: Api, body: dict[str, Any]) -> str:
    """The stage that sent `body`: by its system prompt; a revision carries the previous <답변>."""
    system = body.get("system", "") if api == "anthropic" else (
        body["messages"][0]["content"] if body["messages"] and body["messages"][0]["role"] == "system" else "")
    if system.startswith(GENERATE_PROMPT):
        user = _first_user_text(api, body)
        return "revise" if "<답변>" in user else "answer"
    return next((stage for prompt, stage in STAGES_BY_PROMPT.items() if system.startswith(prompt)), "unknown")


def _first_user_text(api: Api, body: dict[str, Any]) -> str:
    for message in body["messages"]:
        if message["role"] == "user" and isinstance(message["content"], str):
            return message["content"]
    return ""


class _Stall(httpx2.AsyncByteStream):
    """Sends `head`, then never another byte (a server that went silent)."""

    def __init__(self, head: bytes = b"") -> None:
        self.head = head

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.head:
            yield self.head
        await asyncio.Event().wait()


@dataclass
class Rendered:
    status: int
    headers: dict[str, str]
    body: bytes
    stall: bool = False  # after `body`, send nothing more and never finish


class FakeLlmApi:
    """Scripted replies per stage for one API; records each stage's request bodies."""

    def __init__(self, api: Api, **scripts: list[Reply | Callable[[str, dict[str, Any]], Reply]]) -> None:
        self.api = api
        self.scripts = {stage: list(replies) for stage, replies in scripts.items()}
        self.bodies: dict[str, list[dict[str, Any]]] = {}

    @property
    def url(self) -> str:
        return ANTHROPIC_URL if self.api == "anthropic" else OPENAI_URL

    def calls(self, stage: str | None = None) -> int:
        if stage is None:
            return sum(len(b) for b in self.bodies.values())
        return len(self.bodies.get(stage, []))

    def sent(self, stage: str, index: int = 0) -> str:
        """Everything the stage's request carried as text (system prompt, messages, tool results)."""
        return json.dumps(self.bodies[stage][index], ensure_ascii=False)

    def user_text(self, stage: str, index: int = 0) -> str:
        return _first_user_text(self.api, self.bodies[stage][index])

    def render(self, body: dict[str, Any]) -> Rendered:
        stage = stage_of(self.api, body)
        self.bodies.setdefault(stage, []).append(body)
        script = self.scripts.get(stage) or [status(500)]
        reply = script.pop(0) if len(script) > 1 else script[0]
        if callable(reply):  # a scripted model that reads the request: (the request as text, the body)
            reply = reply(json.dumps(body, ensure_ascii=False), body)
        return self._render(reply, stream=bool(body.get("stream")))

    # --- respx ---------------------------------------------------------------------------------------------

    def handler(self, request: Any) -> Any:
        """A respx side effect (httpx is aliased to httpx2 in the root conftest)."""
        out = self.render(json.loads(request.content))
        if out.stall:
            return httpx2.Response(out.status, headers=out.headers, stream=_Stall(out.body))
        return httpx2.Response(out.status, headers=out.headers, content=out.body)

    # --- aiohttp (benchmarks) ------------------------------------------------------------------------------

    async def aiohttp_handler(self, request: Any) -> Any:
        from aiohttp import web

        out = self.render(await request.json())
        if not out.stall:
            return web.Response(status=out.status, headers=out.headers, body=out.body)
        response = web.StreamResponse(status=out.status, headers=out.headers)
        await response.prepare(request)
        if out.body:
            await response.write(out.body)
        await asyncio.Event().wait()
        return response

    def aiohttp_app(self) -> Any:
        from aiohttp import web

        app = web.Application()
        app.router.add_post("/v1/messages", self.aiohttp_handler)
        app.router.add_post("/v1/chat/completions", self.aiohttp_handler)
        return app

    # --- wire formats --------------------------------------------------------------------------------------

    def _render(self, reply: Reply, *, stream: bool) -> Rendered:
        sse = {"content-type": "text/event-stream"}
        js = {"content-type": "application/json"}
        if reply.kind == "hang":
            return Rendered(200, sse if stream else js, b"", stall=True)
        if reply.kind == "status":
            kind = reply.data.get("error_type", "api_error")
            error = {"type": "error", "error": {"type": kind, "message": "fake failure"}}
            return Rendered(reply.status, {**js, **reply.headers}, json.dumps(error).encode())
        if reply.kind == "non_json":
            return Rendered(200, js, b"<html><body>502 Bad Gateway (proxy)</body></html>")
        if reply.kind == "stalled":
            out = self._render(Reply("truncated", deltas=reply.deltas), stream=stream)
            return Rendered(out.status, out.headers, out.body, stall=True)
        if self.api == "anthropic":
            return self._anthropic(reply, stream, sse, js)
        return self._openai(reply, stream, sse, js)

    def _anthropic(self, reply: Reply, stream: bool, sse: dict[str, str], js: dict[str, str]) -> Rendered:
        if not stream:
            if reply.kind == "json":
                block = {"type": "tool_use", "id": "toolu_1", "name": "record_result", "input": reply.data}
                return Rendered(200, js, json.dumps(_anthropic_message([block], "tool_use")).encode())
            text = "".join(reply.deltas)
            return Rendered(200, js, json.dumps(_anthropic_message([{"type": "text", "text": text}],
                                                                   "end_turn")).encode())
        if reply.kind == "empty_stream":
            return Rendered(200, sse, b"")
        calls = reply.calls or ((("record_result", reply.data),) if reply.kind == "json" else ())
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": {
                **_anthropic_message([], None), "usage": {"input_tokens": 120, "output_tokens": 1}}})]
        index = 0
        if reply.deltas:
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": d}}) for d in reply.deltas]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            index = 1
        for number, (name, arguments) in enumerate(calls):
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index + number, "content_block": {
                    "type": "tool_use", "id": f"toolu_{number}", "name": name, "input": {}}}),
                ("content_block_delta", {"type": "content_block_delta", "index": index + number, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(arguments, ensure_ascii=False)}}),
                ("content_block_stop", {"type": "content_block_stop", "index": index + number}),
            ]
        stop_reason = "tool_use" if calls else "end_turn"
        if reply.kind != "truncated":
            events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                                             "stop_sequence": None},
                                          "usage": {"output_tokens": 40}}),
                       ("message_stop", {"type": "message_stop"})]
        body = "".join(f"event: {n}\ndata: {json.dumps(d, ensure_ascii=False)}\n\n" for n, d in events).encode()
        return Rendered(200, sse, body)

    def _openai(self, reply: Reply, stream: bool, sse: dict[str, str], js: dict[str, str]) -> Rendered:
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.deltas) or None}
            if reply.kind == "json":
                # The forced tool call, and the same object as content for servers read in json_schema mode.
                message = {"role": "assistant", "content": json.dumps(reply.data, ensure_ascii=False), "tool_calls": [{
                    "id": "call_1", "type": "function", "function": {
                        "name": "record_result", "arguments": json.dumps(reply.data, ensure_ascii=False)}}]}
            body = {"id": "c1", "object": "chat.completion", "model": "fake", "choices": [
                {"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
            return Rendered(200, js, json.dumps(body).encode())
        if reply.kind == "empty_stream":
            return Rendered(200, sse, b"data: [DONE]\n\n")
        chunks: list[dict[str, Any]] = [_openai_chunk({"content": d}) for d in reply.deltas]
        calls = reply.calls or ((("record_result", reply.data),) if reply.kind == "json" else ())
        for number, (name, arguments) in enumerate(calls):
            chunks.append(_openai_chunk({"tool_calls": [{"index": number, "id": f"call_{number}", "type": "function",
                                                         "function": {"name": name, "arguments": ""}}]}))
            chunks.append(_openai_chunk({"tool_calls": [{"index": number, "function": {
                "arguments": json.dumps(arguments, ensure_ascii=False)}}]}))
        lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
        if reply.kind != "truncated":
            finish = _openai_chunk({}, finish_reason="tool_calls" if calls else "stop")
            usage = {"id": "c1", "object": "chat.completion.chunk", "model": "fake", "choices": [],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 40}}
            lines += [f"data: {json.dumps(finish)}\n\n", f"data: {json.dumps(usage)}\n\n", "data: [DONE]\n\n"]
        return Rendered(200, sse, "".join(lines).encode())


def _anthropic_message(content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-fake", "content": content,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}


def _openai_chunk(delta: dict[str, Any], *, finish_reason: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

