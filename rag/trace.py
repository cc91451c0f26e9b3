"""TurnTrace: one turn's timings, LLM-call budget and flow log, and the `Answer` a turn ends with."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from rag.llm import LlmCallBudget, LlmProvider
from rag.models import Answer, Citation, Hit, Outcome, Route

log = logging.getLogger(__name__)

StageT = TypeVar("StageT")


@dataclass
class TurnTrace:
    """Per-turn timings, LLM-call budget and flow log."""

    started: float = field(default_factory=time.perf_counter)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    budget: LlmCallBudget = field(default_factory=lambda: LlmCallBudget(0))
    stage_timeout_s: float = 20.0  # any one non-streaming stage (`PipelineConfig.stage_timeout_s`)
    language: str = ""  # the asker's language once the understanding decided it (`Answer.language`)

    @property
    def llm_calls(self) -> int:
        return self.budget.calls

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = round(self.timings_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000, 2)

    async def timed(self, name: str, step: Awaitable[StageT]) -> StageT:
        """Run one stage under the per-stage timeout, adding its time to the trace."""
        with self.stage(name):
            try:
                async with asyncio.timeout(self.stage_timeout_s):
                    return await step
            except TimeoutError:
                log.warning("stage %s took longer than %s s", name, self.stage_timeout_s)
                raise

    def note(self, line: str) -> None:
        self.notes.append(line)

    def answer(self, text: str, route: Route, *, llm: LlmProvider | None, citations: tuple[Citation, ...] = (),
               hits: list[Hit] | None = None, followups: tuple[str, ...] = (), grounded: bool = True,
               outcome: Outcome | None = None) -> Answer:
        """The turn's `Answer`, with what the trace measured (`llm`: the provider whose breaker state it reports)."""
        self.timings_ms["total"] = round((time.perf_counter() - self.started) * 1000, 2)
        return Answer(text=text, route=route, citations=citations, followups=followups, grounded=grounded,
                      outcome=outcome,
                      llm_calls=self.llm_calls, timings_ms=dict(self.timings_ms),
                      llm_tokens={stage: (u.input_tokens, u.output_tokens)
                                  for stage, u in self.budget.by_stage.items()},
                      llm_breaker=str(getattr(llm, "breaker_state", "")),
                      retrieved=tuple(hits or ()), notes=tuple(self.notes), language=self.language,
                      cache="miss" if "cache" in self.timings_ms else "off")


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
