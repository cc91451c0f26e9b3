"""How a question asks for a figure: the unit it asks for decides which stated figures answer it (the asked units
are the `units` of rag/data/asks.yaml, whose examples test_asks.py runs)."""

from __future__ import annotations

import pytest

from rag.lang.asks import QuestionReader
from rag.lang.quantities import with_figure_units

READER = QuestionReader()

def answers(question: str, text: str) -> bool:
    return any(pattern.search(text) for pattern in READER.read(question).stated_units)


@pytest.mark.parametrize(("question", "answering", "not_answering"), [
    ("연차는 며칠이야?", "15일의 유급휴가를 준다", "3개월 이내에 준다"),
    ("1년에 최소 몇 주는 수업해야 해?", "수업일수는 30주 이상으로 한다", "15일 이상 연다"),
    ("몇 달 밀린 데까지 받아볼 수 있어?", "3개월 이상 체납한 경우", "30일 이내"),
    ("위원회는 몇 명으로 꾸려져?", "15명 이내의 위원으로 구성한다", "2년으로 한다"),
    ("가산세 몇 퍼센트 붙어?", "100분의 10에 상당하는 금액", "10일 이내"),
])
def test_a_figure_answers_when_it_is_in_the_unit_asked_for(question, answering, not_answering):
    assert answers(question, answering)
    assert not answers(question, not_answering)


@pytest.mark.parametrize("question", ["몇 분 기다려야 해?", "연차는 언제 써야 해?", "퇴직금 계산 방법"])
def test_no_unit_is_read_into_a_question_that_names_none(question):
    # "몇 분" may be minutes or people; the other two ask for no figure in a unit.
    assert READER.read(question).units == ()


def test_a_stated_figure_counts_its_unit_as_found():
    # "4시간" in an article answers the 시간 of "휴게시간은 몇 시간이야?"; the figure itself stays too.
    assert with_figure_units(["휴게", "4시간", "30분"]) == {"휴게", "4시간", "시간", "30분", "분"}


def test_a_stated_figure_is_read_whole_by_the_unit_asked():
    from rag.lang.quantities import FIGURE, figure_unit, stated_figures

    days = READER.read("연차 며칠이야?").units[0]
    assert stated_figures("15일의 유급휴가, 최대 25일", [(days.name, days.stated)]) == {days.name: {"15일", "25일"}}
    assert stated_figures("1,000원 또는 2배", [("", FIGURE)]) == {"원": {"1,000원"}, "배": {"2배"}}
    assert figure_unit("1,000원") == "원" and figure_unit("30") == ""
