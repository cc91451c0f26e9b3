"""build_llm_provider: REGBOT_LLM → a resilient provider, or None for offline."""

from __future__ import annotations

import json

import pytest

from rag.errors import ConfigError
from rag.llm import ResilientProvider, build_llm_provider


def test_offline_means_no_provider():
    assert build_llm_provider("offline") is None


def test_anthropic_without_a_key_names_the_setting():
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        build_llm_provider("anthropic")


def test_openai_without_a_base_url_or_model_names_the_setting():
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        build_llm_provider("openai", fast_model="qwen")
    with pytest.raises(ConfigError, match="REGBOT_OPENAI_MODEL"):
        build_llm_provider("openai", base_url="http://vllm.test/v1")


async def test_anthropic_provider_sends_to_the_configured_url_and_models(respx_mock, make_request, payloads):
    route = respx_mock.post("http://gateway.test/v1/messages").respond(
        json=payloads.anthropic_message({"type": "text", "text": "네"})
    )
    llm = build_llm_provider(
        "anthropic", api_key="test-key", base_url="http://gateway.test", strong_model="claude-custom"
    )

    assert isinstance(llm, ResilientProvider)
    assert (llm.name, llm.available) == ("anthropic", True)
    await llm.complete(make_request(tier="strong"))
    await llm.complete(make_request(tier="fast"))

    models = [json.loads(call.request.content)["model"] for call in route.calls]
    assert models == ["claude-custom", "claude-haiku-4-5"]


async def test_openai_provider_uses_one_model_for_both_tiers(respx_mock, make_request):
    route = respx_mock.post("http://vllm.test/v1/chat/completions").respond(
        json={"model": "qwen", "choices": [{"message": {"role": "assistant", "content": "네"}}]}
    )
    llm = build_llm_provider("openai", base_url="http://vllm.test/v1", fast_model="qwen")

    response = await llm.complete(make_request(tier="strong"))

    assert response.text == "네"
    assert json.loads(route.calls[0].request.content)["model"] == "qwen"
    await llm.aclose()
