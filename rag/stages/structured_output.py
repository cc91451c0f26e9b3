"""One structured (JSON) LLM call for a stage: a wall-clock bound, then the reply validated into a pydantic model.

Every failure surfaces as an `LlmUnavailable` subclass, so a stage needs one `except LlmUnavailable` to fall
back to its offline sibling: a timeout becomes `LlmRequestFailed`, a reply that does not fit the model becomes
`LlmOutputInvalid`. The system prompt always ends with `UNTRUSTED_TEXT_RULE`: stages fence what they quote.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rag.llm import UNTRUSTED_TEXT_RULE, LlmOutputInvalid, LlmProvider, LlmRequest, LlmRequestFailed, Tier
from rag.models import Message, Role

ModelT = TypeVar("ModelT", bound=BaseModel)


async def complete_structured(llm: LlmProvider, *, system: str, user: str, schema: dict[str, Any],
                              output: type[ModelT], timeout_s: float, stage: str, hang_s: float = 2.5,
                              max_tokens: int = 800, tier: Tier = "fast") -> ModelT:
    """Ask for a JSON object matching `schema` and return it as `output`.

    The reply is streamed: `hang_s` without any event (connect, first byte, between events) is a hang,
    which the provider counts against the service at once; `timeout_s` bounds the whole call, retries
    included, for a reply that is slow but progressing. `stage` names the call in usage counters.
    """
    request = LlmRequest(system=system + UNTRUSTED_TEXT_RULE, messages=(Message(role=Role.USER, content=user),),
                         json_schema=schema, tier=tier, max_tokens=max_tokens, timeout_s=min(hang_s, timeout_s),
                         deadline_s=timeout_s, stage=stage)
    stream = llm.stream(request)
    try:
        # A safety net only: the provider gives up first and records why.
        async with asyncio.timeout(timeout_s + 1.0):
            async for _ in stream:
                pass  # progress events; the object comes whole at the end
    except TimeoutError as error:
        raise LlmRequestFailed(f"no structured answer within {timeout_s} s", retryable=True) from error
    finally:
        await stream.aclose()
    response = stream.response
    if response is None:
        raise LlmOutputInvalid("the structured stream ended without a result")
    try:
        return output.model_validate(response.data or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise LlmOutputInvalid(f"the model's JSON does not fit {output.__name__}: {where}: {first['msg']}") from error
