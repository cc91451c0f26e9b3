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
                              output: type[ModelT], timeout_s: float, stage: str, max_tokens: int = 800,
                              tier: Tier = "fast") -> ModelT:
    """Ask for a JSON object matching `schema` and return it as `output`.

    `timeout_s` bounds the whole call, retries included (the provider's deadline, so a hang is counted
    against the service): a stage would rather fall back than wait. `stage` names the call in usage counters.
    """
    request = LlmRequest(system=system + UNTRUSTED_TEXT_RULE, messages=(Message(role=Role.USER, content=user),),
                         json_schema=schema, tier=tier, max_tokens=max_tokens, timeout_s=timeout_s,
                         deadline_s=timeout_s, stage=stage)
    try:
        # A safety net only: the provider gives up at `timeout_s` and records why.
        async with asyncio.timeout(timeout_s + 1.0):
            response = await llm.complete(request)
    except TimeoutError as error:
        raise LlmRequestFailed(f"no structured answer within {timeout_s} s", retryable=True) from error
    try:
        return output.model_validate(response.data or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise LlmOutputInvalid(f"the model's JSON does not fit {output.__name__}: {where}: {first['msg']}") from error
