"""A small TurnService for Slack e2e tests: a scripted answer citing 취업규칙 제20조, with history kept.

Our own sample text, not corpus text. `script` can be replaced per test (e.g. to emit an error or a
model that tries to ping `<!channel>`); `gate` holds answers until the test releases it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from adapters.base import Feedback, ScopeRequest
from rag.models import Answer, AnswerEvent, Citation, Message, Role, Route, Scope, Turn

ANSWER_TEXT = (
    "연차 유급휴가는 1년간 80퍼센트 이상 출근한 직원에게 15일이 주어집니다 [1].\n\n"
    "사용하려면 3일 전까지 부서장에게 신청하세요."
)
CITATION = Citation(
    index=1,
    doc="취업규칙",
    article="제20조",
    title="연차 유급휴가",
    quote="1년간 80퍼센트 이상 출근한 직원에게 15일의 유급휴가를 준다.",
    url="https://wiki.example.com/rules/20",
)
FOLLOWUPS = ("연차를 다 못 쓰면 수당이 나와?", "반차도 쓸 수 있어?")

Script = Callable[[Turn], AsyncIterator[AnswerEvent]]


async def cited_answer(turn: Turn, text: str = ANSWER_TEXT) -> AsyncIterator[AnswerEvent]:
    """The usual shape of a pipeline run: status, deltas, sources, follow-ups, done."""
    yield AnswerEvent.status("관련 규정을 검색하고 있어요…")
    for start in range(0, len(text), 12):
        yield AnswerEvent.delta(text[start : start + 12])
    yield AnswerEvent.sources((CITATION,))
    yield AnswerEvent.followup_questions(FOLLOWUPS)
    answer = Answer(text=text, route=Route.SEARCH, citations=(CITATION,), followups=FOLLOWUPS)
    yield AnswerEvent.done(answer)


class FakeTurnService:
    """Implements adapters.base.TurnService in memory and records what the adapter asked."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.feedback: list[Feedback] = []
        self.scope_requests: list[ScopeRequest] = []
        self.claimed: set[str] = set()
        self.claim_attempts: list[str] = []
        self.store: dict[str, list[Message]] = {}
        self.script: Script = cited_answer
        self.gate: asyncio.Event | None = None
        self.running = 0  # answers started and not yet over, as the bot's queue counts them for a drain

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
        self.claim_attempts.append(key)
        if key in self.claimed:
            return False
        self.claimed.add(key)
        return True

    async def has_history(self, conversation_key: str) -> bool:
        return conversation_key in self.store

    async def history(self, conversation_key: str) -> list[Message]:
        return list(self.store.get(conversation_key, []))

    async def scope_for(self, request: ScopeRequest) -> Scope:
        self.scope_requests.append(request)
        return Scope()

    async def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        self.turns.append(turn)
        self.running += 1
        try:
            if self.gate is not None:
                await self.gate.wait()
            async for event in self.script(turn):
                if event.answer is not None:
                    self.store.setdefault(turn.conversation_key, []).extend(
                        [
                            Message(role=Role.USER, content=turn.text),
                            Message(role=Role.ASSISTANT, content=event.answer.text),
                        ]
                    )
                yield event
        finally:
            self.running -= 1

    async def record_feedback(self, feedback: Feedback) -> None:
        self.feedback.append(feedback)
