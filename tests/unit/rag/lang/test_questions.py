"""Question words, the joins of a compound question and the openers of a follow-up (rag/lang/questions.py,
rag/lang/followup.py)."""

import pytest

from rag.lang.followup import CORRECTION, FOLLOWUP_OPENER, POINTS_BACK
from rag.lang.questions import ASKS, QUESTION_CUE, QUESTION_JOIN, spoken


@pytest.mark.parametrize("part", ["병가는 며칠이야", "어디에 내", "신고해야 하는지", "출장비 나와?"])
def test_a_part_that_asks(part):
    assert ASKS.search(part)


@pytest.mark.parametrize("part", ["서류를 준비하고", "공무원이야"])
def test_a_part_that_only_tells(part):
    assert not ASKS.search(part)


def test_small_talk_with_a_question_carries_a_cue_and_plain_thanks_none():
    assert QUESTION_CUE.search("고마워요 근데 병가는 어떻게 돼") and not QUESTION_CUE.search("고마워요 덕분에 살았어요")


def test_a_question_word_joined_by_igo_splits_two_questions():
    question = "연차는 며칠이고 병가는 어떻게 돼?"
    joins = list(QUESTION_JOIN.finditer(question))
    assert [question[: j.start()] for j in joins] == ["연차는 며칠"] and joins[0].group(1)


def test_a_part_cut_after_a_bare_stem_is_said_as_asked():
    assert spoken("어떻게 계산되") == "어떻게 계산돼" and spoken("뭘 적어야 하") == "뭘 적어야 해"


@pytest.mark.parametrize(("question", "rest"), [("그럼 21조는?", "21조는?"), ("근데, 전문 보여줘", "전문 보여줘"),
                                                ("그다음 조문", "조문"), ("21조는?", "21조는?")])
def test_an_opener_is_stripped_before_the_reference(question, rest):
    assert FOLLOWUP_OPENER.sub("", question, count=1) == rest


def test_a_correction_and_a_pointer_back():
    assert CORRECTION.match("근로기준법 말고 취업규칙 20조").end() == len("근로기준법 말고 ")
    assert POINTS_BACK.search("그 계약서는 어디에 내") and not POINTS_BACK.search("계약서는 어디에 내")
