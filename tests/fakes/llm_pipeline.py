"""An LLM pipeline over the sample components, talking to a fake API (`FakeLlmApi`) over HTTP (respx):
Anthropic or OpenAI-compatible, one attempt per call, a breaker that stays closed, short stage timeouts."""

from __future__ import annotations

from rag.llm import CircuitBreaker, ResilientProvider, RetryPolicy
from rag.llm.anthropic import AnthropicProvider
from rag.llm.openai_compat import OpenAICompatibleProvider
from rag.pipeline import AnswerPipeline, PipelineConfig
from rag.stages.factory import StageTimeouts, build_stages
from tests.fakes.clock import RecordedSleeps
from tests.fakes.llm_api import OPENAI_BASE_URL, FakeLlmApi


def fake_provider(api: str, respx_mock, fake: FakeLlmApi) -> ResilientProvider:
    """The real provider for `api` (its SDK, one attempt a call, a breaker that stays closed) sending to `fake`."""
    respx_mock.post(fake.url).mock(side_effect=fake.handler)
    if api == "anthropic":
        inner = AnthropicProvider(api_key="k", base_url="http://llm.test", fast_model="f", strong_model="s")
    else:
        inner = OpenAICompatibleProvider(base_url=OPENAI_BASE_URL, fast_model="qwen")
    return ResilientProvider(inner, retry=RetryPolicy(max_attempts=1), sleep=RecordedSleeps(),
                             breaker=CircuitBreaker(failure_threshold=50))


def llm_pipeline(api: str, components, respx_mock, fake: FakeLlmApi, *, max_llm_calls: int = 5) -> AnswerPipeline:
    llm = fake_provider(api, respx_mock, fake)
    c = components
    stages = build_stages(llm=llm, corpus=c.corpus, tokenizer=c.tokenizer, lookup=c.lookup,
                          analyzer=c.retriever.analyzer, search=c.retriever,
                          timeouts=StageTimeouts(structured_s=2.0, stream_hang_s=2.0))
    return AnswerPipeline(stages=stages, retriever=c.retriever, config=PipelineConfig(max_llm_calls=max_llm_calls))


class FakeLlmServer:
    """A `FakeLlmApi` served over real HTTP on 127.0.0.1 (the server's own provider and SDK talk to it); the
    script can be swapped per test while the server and the components built against it stay up."""

    def __init__(self, api: str = "anthropic") -> None:
        self.fake = FakeLlmApi(api)  # type: ignore[arg-type]
        self.url = ""
        self._runner = None

    async def __aenter__(self) -> FakeLlmServer:
        from aiohttp import web

        from testkit import free_port

        async def serve(request: web.Request) -> web.StreamResponse:
            return await self.fake.aiohttp_handler(request)

        app = web.Application()
        app.router.add_post("/v1/messages", serve)
        app.router.add_post("/v1/chat/completions", serve)
        # A hung reply never ends by itself: closing the server must not wait the default minute for it.
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()

    def script(self, **scripts) -> FakeLlmApi:
        self.fake = FakeLlmApi(self.fake.api, **scripts)
        return self.fake


def llm_settings(server: FakeLlmServer, **overrides: str) -> dict[str, str]:
    """The environment that points `build_components` at the fake API (Anthropic), as an operator would."""
    return {"REGBOT_LLM": "anthropic", "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url,
            "REGBOT_FAST_MODEL": "claude-fast", "REGBOT_STRONG_MODEL": "claude-strong", **overrides}
