"""One in-memory TurnService for every adapter's tests: scripted answers, a history store, a record of requests.

Each adapter's tests keep their own sample answer (a script) beside them; this class is what they run it through.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable

from adapters.base import Feedback, ScopeRequest
from rag.models import AnswerEvent, Message, Role, Scope, Turn

# A script answers one turn: an async generator of events, or a plain list of them.
Script = Callable[[Turn], AsyncIterable[AnswerEvent] | Iterable[AnswerEvent]]


class FakeTurnService:
    """Implements `adapters.base.TurnService` in memory and records what the adapter asked.

    Like `BotService`, a turn that brings no history gets the stored one, and the exchange is saved after `done`
    went out (the latest a service could), so an adapter must keep reading past `done`.

    - `script` (replaceable per test) produces the events of each answer.
    - `gate`, when set, holds every answer until the test opens it; `running` counts answers not yet over, as the
      bot's queue counts them for a drain; `closed` is set once an answer stream ends or the adapter closes it.
    - `between_events` runs before each event (e.g. advancing a fake clock, as a slow LLM would).
    """

    def __init__(
        self,
        script: Script,
        *,
        scope: Scope | None = None,
        between_events: Callable[[], None] | None = None,
    ) -> None:
        self.script = script
        self.scope = scope or Scope()
        self.between_events = between_events
        self.gate: asyncio.Event | None = None
        self.running = 0
        self.closed = asyncio.Event()
        self.turns: list[Turn] = []
        self.scope_requests: list[ScopeRequest] = []
        self.feedback: list[Feedback] = []
        self.histories: dict[str, list[Message]] = {}
        self.claim_attempts: list[str] = []
        self._claimed: set[str] = set()

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
        self.claim_attempts.append(key)
        if key in self._claimed:
            return False
        self._claimed.add(key)
        return True

    async def has_history(self, conversation_key: str) -> bool:
        return conversation_key in self.histories

    async def history(self, conversation_key: str) -> list[Message]:
        return list(self.histories.get(conversation_key, []))

    async def scope_for(self, request: ScopeRequest) -> Scope:
        self.scope_requests.append(request)
        return self.scope

    def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        return self._answer(turn)

    async def _answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        stored = tuple(self.histories.get(turn.conversation_key, []))
        turn = turn.model_copy(update={"history": turn.history or stored})
        self.turns.append(turn)  # as the pipeline would see it
        self.running += 1
        try:
            if self.gate is not None:
                await self.gate.wait()
            async for event in _events(self.script(turn)):
                if self.between_events is not None:
                    self.between_events()
                yield event
                if event.answer is not None:
                    self.histories.setdefault(turn.conversation_key, []).extend(
                        [
                            Message(role=Role.USER, content=turn.text),
                            Message(role=Role.ASSISTANT, content=event.answer.text),
                        ]
                    )
        finally:
            self.running -= 1
            self.closed.set()

    async def record_feedback(self, feedback: Feedback) -> None:
        self.feedback.append(feedback)


async def _events(produced: AsyncIterable[AnswerEvent] | Iterable[AnswerEvent]) -> AsyncIterator[AnswerEvent]:
    if isinstance(produced, AsyncIterable):
        async for event in produced:
            yield event
    else:
        for event in produced:
            yield event


__all__ = ["FakeTurnService", "Script"]
