"""The answer Slack e2e tests run through `tests.fakes.turn_service.FakeTurnService`: it cites 취업규칙 제20조.

Our own sample text, not corpus text. Tests replace `service.script` to emit an error, a long answer or a model
that tries to ping `<!channel>`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from rag import messages
from rag.models import Answer, AnswerEvent, Citation, Route, Turn

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


async def cited_answer(turn: Turn, text: str = ANSWER_TEXT) -> AsyncIterator[AnswerEvent]:
    """The usual shape of a pipeline run: status, deltas, sources, follow-ups, done."""
    yield AnswerEvent.status(messages.STATUS_SEARCHING)
    for start in range(0, len(text), 12):
        yield AnswerEvent.delta(text[start : start + 12])
    yield AnswerEvent.sources((CITATION,))
    yield AnswerEvent.followup_questions(FOLLOWUPS)
    answer = Answer(text=text, route=Route.SEARCH, citations=(CITATION,), followups=FOLLOWUPS)
    yield AnswerEvent.done(answer)
