"""LLM providers behind one protocol, and the resilience layer stages receive.

    llm = build_llm_provider("anthropic", api_key=settings.anthropic_api_key)
    with llm_call_budget(LlmCallBudget(8)) as budget:
        response = await llm.complete(LlmRequest(system=..., messages=(...,), json_schema=SCHEMA))
    # budget.calls is the turn's llm_calls

Every error is an `LlmUnavailable` (see `rag.llm.base` for the tree): a stage catches that and
uses its offline sibling.

The provider modules (and the `anthropic` SDK, ~1.3 s to import) load only when a provider is built
or named: offline mode never imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rag.errors import ConfigError, LlmStreamInterrupted, LlmUnavailable
from rag.llm.base import (
    LlmOutputInvalid,
    LlmProvider,
    LlmRequest,
    LlmRequestFailed,
    LlmResponse,
    LlmStream,
    Tier,
    ToolCall,
    ToolExchange,
    ToolSpec,
)
from rag.llm.resilience import (
    CircuitBreaker,
    LlmBudgetExhausted,
    LlmCallBudget,
    LlmUsage,
    ResilientProvider,
    RetryPolicy,
    StageUsage,
    current_llm_call_budget,
    llm_call_budget,
)
from rag.llm.untrusted import UNTRUSTED_TEXT_RULE, fence, looks_like_instruction

if TYPE_CHECKING:
    import httpx2

    from rag.llm.anthropic import AnthropicProvider
    from rag.llm.openai_compat import OpenAICompatibleProvider

__all__ = [
    "UNTRUSTED_TEXT_RULE",
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
    "StageUsage",
    "Tier",
    "ToolCall",
    "ToolExchange",
    "ToolSpec",
    "build_llm_provider",
    "current_llm_call_budget",
    "fence",
    "llm_call_budget",
    "looks_like_instruction",
]

LlmKind = Literal["offline", "anthropic", "openai"]


def __getattr__(name: str) -> Any:
    # The providers import their SDKs; load them on first use, never in offline mode.
    if name == "AnthropicProvider":
        from rag.llm.anthropic import AnthropicProvider

        return AnthropicProvider
    if name == "OpenAICompatibleProvider":
        from rag.llm.openai_compat import OpenAICompatibleProvider

        return OpenAICompatibleProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    connect_timeout_s: float = 3.0,
) -> ResilientProvider | None:
    """The provider for `REGBOT_LLM`, wrapped in `ResilientProvider`; None for `offline`.

    Empty model names take the provider's defaults (Anthropic) or fail (OpenAI-compatible needs
    `fast_model`; `strong_model` defaults to it). Raises `ConfigError` for a missing key or URL.
    """
    provider: LlmProvider
    if kind == "offline":
        return None
    if kind == "anthropic":
        from rag.llm.anthropic import AnthropicProvider

        models = {"fast_model": fast_model, "strong_model": strong_model}
        provider = AnthropicProvider(
            api_key=api_key,
            base_url=base_url or None,
            http_client=http_client,
            connect_timeout_s=connect_timeout_s,
            **{name: value for name, value in models.items() if value},
        )
    elif kind == "openai":
        from rag.llm.openai_compat import OpenAICompatibleProvider

        provider = OpenAICompatibleProvider(
            base_url=base_url,
            api_key=api_key,
            fast_model=fast_model,
            strong_model=strong_model,
            http_client=http_client,
            connect_timeout_s=connect_timeout_s,
        )
    else:
        raise ConfigError(f"REGBOT_LLM must be offline, anthropic or openai, not {kind!r}")
    return ResilientProvider(provider, retry=retry, breaker=breaker)
