"""LLM providers behind one protocol, and the resilience layer stages receive.

    llm = build_llm_provider("anthropic", api_key=settings.anthropic_api_key)
    with llm_call_budget(LlmCallBudget(8)) as budget:
        response = await llm.complete(LlmRequest(system=..., messages=(...,), json_schema=SCHEMA))
    # budget.calls is the turn's llm_calls

Every error is an `LlmUnavailable` (see `rag.llm.base` for the tree): a stage catches that and
uses its offline sibling.
"""

from __future__ import annotations

from typing import Literal

import httpx2

from rag.errors import ConfigError, LlmStreamInterrupted, LlmUnavailable
from rag.llm.anthropic import AnthropicProvider
from rag.llm.base import (
    LlmOutputInvalid,
    LlmProvider,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
    Tier,
)
from rag.llm.openai_compat import OpenAICompatibleProvider
from rag.llm.resilience import (
    CircuitBreaker,
    LlmBudgetExhausted,
    LlmCallBudget,
    LlmUsage,
    ResilientProvider,
    RetryPolicy,
    current_llm_call_budget,
    llm_call_budget,
)

__all__ = [
    "AnthropicProvider",
    "CircuitBreaker",
    "LlmBudgetExhausted",
    "LlmCallBudget",
    "LlmOutputInvalid",
    "LlmProvider",
    "LlmRequest",
    "LlmRequestFailed",
    "LlmResponse",
    "LlmStream",
    "LlmStreamInterrupted",
    "LlmUnavailable",
    "LlmUsage",
    "OpenAICompatibleProvider",
    "ResilientProvider",
    "RetryPolicy",
    "Tier",
    "build_llm_provider",
    "current_llm_call_budget",
    "llm_call_budget",
]

LlmKind = Literal["offline", "anthropic", "openai"]


def build_llm_provider(
    kind: LlmKind,
    *,
    api_key: str = "",
    base_url: str = "",
    fast_model: str = "",
    strong_model: str = "",
    http_client: httpx2.AsyncClient | None = None,
    retry: RetryPolicy | None = None,
    breaker: CircuitBreaker | None = None,
) -> ResilientProvider | None:
    """The provider for `REGBOT_LLM`, wrapped in `ResilientProvider`; None for `offline`.

    Empty model names take the provider's defaults (Anthropic) or fail (OpenAI-compatible needs
    `fast_model`; `strong_model` defaults to it). Raises `ConfigError` for a missing key or URL.
    """
    provider: LlmProvider
    if kind == "offline":
        return None
    if kind == "anthropic":
        models = {"fast_model": fast_model, "strong_model": strong_model}
        provider = AnthropicProvider(
            api_key=api_key,
            base_url=base_url or None,
            http_client=http_client,
            **{name: value for name, value in models.items() if value},
        )
    elif kind == "openai":
        provider = OpenAICompatibleProvider(
            base_url=base_url,
            api_key=api_key,
            fast_model=fast_model,
            strong_model=strong_model,
            http_client=http_client,
        )
    else:
        raise ConfigError(f"REGBOT_LLM must be offline, anthropic or openai, not {kind!r}")
    return ResilientProvider(provider, retry=retry, breaker=breaker)
