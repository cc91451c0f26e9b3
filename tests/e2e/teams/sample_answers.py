"""The answer Teams tests run through `tests.fakes.turn_service.FakeTurnService`: it cites 취업규칙 제20조.

The sample regulation text below is our own writing.
"""

from __future__ import annotations

from rag import messages
from rag.models import Answer, AnswerEvent, Citation, Role, Route, Turn

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
