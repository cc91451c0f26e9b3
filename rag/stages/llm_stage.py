"""An LLM stage over its offline prior: the one shape every LLM stage has.

Each LLM stage holds the provider, its offline sibling (`fallback`: the answer when the LLM cannot give one, and
for some stages the prior the call starts from), its prompt and its two bounds. A structured call that fails in
any way is an `LlmUnavailable` (`complete_structured`), so `ask` turns it into None with the reason logged, and
the stage answers with its prior: a stage never raises because the LLM is down.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from rag.llm import LlmProvider, LlmUnavailable
from rag.stages.structured_output import complete_structured

log = logging.getLogger(__name__)

OfflineT = TypeVar("OfflineT")
ReplyT = TypeVar("ReplyT", bound=BaseModel)


class LlmOverOffline(Generic[OfflineT]):
    """The provider, the offline sibling, the prompt and the bounds of one LLM stage; `stage` names its calls.

    `timeout_s` bounds a whole call (retries included) that is slow but progressing; `hang_s` is how long nothing
    may arrive before the call counts as hung.
    """

    stage: ClassVar[str]

    def __init__(self, llm: LlmProvider, *, fallback: OfflineT, prompt: str, timeout_s: float,
                 hang_s: float) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if hang_s <= 0:
            raise ValueError("hang_s must be positive")
        self.llm = llm
        self.fallback = fallback
        self.prompt = prompt
        self.timeout_s = timeout_s
        self.hang_s = hang_s

    async def ask(self, user: str, output: type[ReplyT], *, schema: dict[str, Any],
                  max_tokens: int) -> ReplyT | None:
        """The model's reply to `user` as `output`, or None when the LLM is unavailable (the reason is logged)."""
        try:
            return await complete_structured(self.llm, system=self.prompt, user=user, schema=schema, output=output,
                                             timeout_s=self.timeout_s, hang_s=self.hang_s, stage=self.stage,
                                             max_tokens=max_tokens)
        except LlmUnavailable as exc:
            self.falling_back(exc)
            return None

    def falling_back(self, reason: object) -> OfflineT:
        """The offline sibling, with the reason the LLM is not used logged."""
        log.warning("%s falls back offline: %s", self.stage, reason)
        return self.fallback
