"""A small in-memory TurnService for Teams adapter tests, with scripted answers and a history store.

The sample regulation text below is our own writing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from adapters.base import Feedback, ScopeRequest
from rag import messages
from rag.models import Answer, AnswerEvent, Citation, Message, Role, Route, Scope, Turn

LEAVE_CITATION = Citation(
    index=1,
    doc="취업규칙",
    article="제20조",
    title="연차휴가",
    quote="1년간 8할 이상 출근한 직원에게는 15일의 유급휴가를 준다. 근속 2년마다 1일을 더하되 25일을 넘지 않는다.",
    url="https://intranet.example.com/rules/work#20",
)
LEAVE_ANSWER = "1년에 8할 이상 출근했다면 연차휴가는 15일이에요[1]. 2년마다 하루씩 늘어 최대 25일까지예요[1]."
LEAVE_FOLLOWUPS = ("남은 연차는 어떻게 확인해?", "연차를 미리 당겨 쓸 수 있어?")

Script = Callable[[Turn], list[AnswerEvent]]


def leave_answer_events(turn: Turn) -> list[AnswerEvent]:
    """A search answer citing 취업규칙 제20조; with history it says which question it follows."""
    text = LEAVE_ANSWER
    if turn.history:
        earlier = next(m.content for m in turn.history if m.role == Role.USER)
        text = f"앞서 물어본 '{earlier}'에 이어서 답할게요. {LEAVE_ANSWER}"
    half = len(text) // 2
    answer = Answer(
        text=text,
        route=Route.SEARCH,
        citations=(LEAVE_CITATION,),
        followups=LEAVE_FOLLOWUPS,
    )
    return [
        AnswerEvent.status(messages.STATUS_SEARCHING),
        AnswerEvent.status(messages.STATUS_WRITING),
        AnswerEvent.delta(text[:half]),
        AnswerEvent.delta(text[half:]),
        AnswerEvent.sources((LEAVE_CITATION,)),
        AnswerEvent.followup_questions(LEAVE_FOLLOWUPS),
        AnswerEvent.done(answer),
    ]


class FakeTurnService:
    """Implements `adapters.base.TurnService` in memory; records turns, scopes and feedback."""

    def __init__(self, script: Script = leave_answer_events, *, between_events: Callable[[], None] | None = None):
        self.script = script
        self.between_events = between_events  # e.g. advance a fake clock, as a slow LLM would
        self.turns: list[Turn] = []
        self.scope_requests: list[ScopeRequest] = []
        self.feedback: list[Feedback] = []
        self.histories: dict[str, list[Message]] = {}
        self._claimed: set[str] = set()

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
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
        return Scope(collections=("default",))

    def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        return self._answer(turn)

    async def _answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        # Like BotService: the stored history unless the adapter brought one; recorded as the pipeline sees it.
        stored = tuple(self.histories.get(turn.conversation_key, []))
        turn = turn.model_copy(update={"history": turn.history or stored})
        self.turns.append(turn)
        for event in self.script(turn):
            if self.between_events is not None:
                self.between_events()
            yield event
            if event.answer is not None:
                # Saved after `done` went out, the latest a service could: adapters must keep reading.
                self.histories.setdefault(turn.conversation_key, []).extend(
                    [
                        Message(role=Role.USER, content=turn.text),
                        Message(role=Role.ASSISTANT, content=event.answer.text),
                    ]
                )

    async def record_feedback(self, feedback: Feedback) -> None:
        self.feedback.append(feedback)
