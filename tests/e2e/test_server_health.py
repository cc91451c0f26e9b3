"""Health, readiness and metrics of the real server; `/readyz` names each dependency (DESIGN.md §3)."""

import aiohttp

from bot.app import build_components
from bot.server.server import build_runtime, create_app
from testkit import HashingEmbedder, make_settings, serve_app


async def readiness(url: str) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as http, http.get(url + "/readyz") as response:
        return response.status, await response.json()


async def test_health_ready_and_metrics_answer(start_regbot):
    server = await start_regbot()
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/healthz") as response:
            assert response.status == 200
        async with http.get(server.url + "/metrics") as response:
            assert response.status == 200
            assert "regbot_" in await response.text()

    status, body = await readiness(server.url)

    assert status == 200
    assert body["checks"] == {"index": "ok", "redis": "disabled", "chroma": "ok", "llm": "offline"}
    assert (body["ready"], body["status"]) == (True, "ok")


async def readiness_of_a_fresh_server(tokenizer, data_dir, **overrides: str) -> tuple[int, dict]:
    """/readyz of a server over its own (empty) data dir."""
    settings = make_settings(data_dir, **overrides)
    components = build_components(settings, embedder=HashingEmbedder(), tokenizer=tokenizer)
    url, runner = await serve_app(create_app(build_runtime(settings, components)))
    try:
        return await readiness(url)
    finally:
        await runner.cleanup()


async def test_configured_llm_is_named_with_its_state(kiwi_tokenizer, tmp_path):
    _, body = await readiness_of_a_fresh_server(kiwi_tokenizer, tmp_path, REGBOT_LLM="anthropic",
                                                ANTHROPIC_API_KEY="sk-ant-test")

    assert body["checks"]["llm"] == "ok"


async def test_empty_index_is_503_and_says_so(kiwi_tokenizer, tmp_path):
    status, body = await readiness_of_a_fresh_server(kiwi_tokenizer, tmp_path)

    assert status == 503
    assert (body["ready"], body["status"], body["checks"]["index"]) == (False, "unavailable", "empty")
    assert "regbot ingest" in body["notes"]["index"]
