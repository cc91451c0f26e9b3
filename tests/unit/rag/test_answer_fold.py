"""rag/answer_fold.py: the one fold of a turn's AnswerEvents that every surface reads."""

from rag.answer_fold import AnswerFold
from rag.models import Answer, AnswerEvent, Citation, Route

STREAMED = Citation(index=1, doc="취업규칙", article="제20조", title="연차휴가")
FINAL = Citation(index=1, doc="취업규칙", article="제21조", title="연차휴가의 사용")


def fold_of(*events: AnswerEvent) -> AnswerFold:
    fold = AnswerFold()
    for event in events:
        fold.take(event)
    return fold


class TestAnswerFold:
    def test_done_carries_the_answer_and_its_citations_replace_the_streamed_ones(self):
        answer = Answer(text="연차는 15일이에요[1].", route=Route.SEARCH, citations=(FINAL,), followups=("이월돼?",))
        fold = fold_of(AnswerEvent.status("찾는 중"), AnswerEvent.delta("연차는 "), AnswerEvent.sources((STREAMED,)),
                       AnswerEvent.followup_questions(("남은 연차?",)), AnswerEvent.done(answer))

        assert (fold.answer, fold.citations, fold.followups) == (answer, (FINAL,), ("이월돼?",))
        assert fold.text == "연차는 " and fold.status == "찾는 중"
        assert fold.ended and not fold.failed

    def test_an_answer_without_citations_keeps_the_streamed_ones(self):
        fold = fold_of(AnswerEvent.sources((STREAMED,)), AnswerEvent.followup_questions(("남은 연차?",)),
                       AnswerEvent.done(Answer(text="연차는 15일이에요.", route=Route.SEARCH)))

        assert (fold.citations, fold.followups) == ((STREAMED,), ("남은 연차?",))

    def test_an_error_ends_the_turn_without_an_answer_and_keeps_what_streamed(self):
        fold = fold_of(AnswerEvent.delta("연차는 "), AnswerEvent.delta("15일"), AnswerEvent.error("시간이 초과됐어요."))

        assert fold.answer is None and fold.failed and fold.ended
        assert (fold.text, fold.error) == ("연차는 15일", "시간이 초과됐어요.")

    def test_a_stream_still_running_has_not_ended(self):
        fold = fold_of(AnswerEvent.status("찾는 중"))

        assert not fold.ended and fold.answer is None and fold.error == ""

    def test_take_returns_the_event_it_folded(self):
        event = AnswerEvent.delta("연차")

        assert AnswerFold().take(event) is event
