"""The question-facet cue table (rag/data/asks.yaml): every cue's examples and counter-examples, and what a reader
makes of a question."""

from pathlib import Path

import pytest

from rag.lang.asks import DEFAULT_ASKS, AskTable, QuestionReader
from rag.lang.cues import cues_of

TABLE = AskTable.load()
CASES = [
    pytest.param(cue, text, expected, id=f"{'.'.join(map(str, loc))}-{'ex' if expected else 'counter'}-{text[:12]}")
    for loc, cue in cues_of(TABLE)
    for texts, expected in ((cue.examples, True), (cue.counter_examples, False))
    for text in texts
]
READER = QuestionReader(TABLE)


@pytest.mark.parametrize(("cue", "text", "expected"), CASES)
def test_every_cue_matches_its_examples_and_not_its_counter_examples(cue, text, expected):
    assert cue.search(text) is expected


def test_a_days_question_with_a_condition_asks_for_an_amount_in_days():
    facets = READER.read("입사 1년 지나면 연차 며칠 받아?")
    assert facets.figure and facets.amount and not facets.meaning
    assert [u.name for u in facets.units] == ["days"]
    assert facets.conditions == {("1", "년", True)}
    assert facets.stated_units[0].search("15일의 유급휴가")


def test_the_amount_and_units_are_read_from_the_users_own_words():
    facets = READER.read("퇴직금은 어떻게 계산해? 그건 며칠 안에 줘야 해?", asked="그건 언제까지 줘야 해?")
    assert not facets.amount and [u.name for u in facets.units] == ["deadline"]  # not the borrowed 며칠


def test_a_repealed_version_may_be_asked_for_in_the_turn_leaned_on():
    assert READER.read("그럼 그때는 며칠이었어?", context="폐지된 규정으로는 연차가 어땠어?").repealed
    assert not READER.read("그럼 그때는 며칠이었어?").repealed


def test_a_long_question_has_a_core_a_short_one_is_its_own():
    story = READER.read("회사를 3년 다니다 퇴사했는데, 퇴직금은 언제까지 받아야 해?")
    assert story.core == "퇴직금은 언제까지 받아야 해?"
    assert READER.read("연차 며칠이야?").core == ""


def test_a_bad_pattern_names_the_file_the_line_and_the_entry(tmp_path: Path):
    text = DEFAULT_ASKS.read_text(encoding="utf-8")
    bad = tmp_path / "asks.yaml"
    bad.write_text(text.replace("pattern: '처벌|", "pattern: '(처벌|", 1), encoding="utf-8")
    line = next(n for n, row in enumerate(bad.read_text(encoding="utf-8").splitlines(), 1) if "'(처벌|" in row)
    with pytest.raises(ValueError, match=rf"asks.yaml:{line}: asks.sanction"):
        AskTable.load(bad)
