"""The question-core cue table (rag/data/question_core.yaml): every entry's examples and counter-examples, and how a
story is told from the asked thing."""

from pathlib import Path

import pytest

from rag.stages.answerability import AnswerabilityJudge
from rag.stages.question_core import QuestionCues, split_question

CUES = QuestionCues.load()
PATTERN_CASES = [
    pytest.param(section, cue, text, expected, id=f"{section}-{n}-{'ex' if expected else 'counter'}-{text[:12]}")
    for section in ("sentence_breaks", "asks", "situation_ends")
    for n, cue in enumerate(getattr(CUES, section))
    for texts, expected in ((cue.examples, True), (cue.counter_examples, False))
    for text in texts
]
FILLER_CASES = [pytest.param(f.word, text, id=f"filler-{f.word}-{text[:12]}") for f in CUES.fillers
                for text in f.examples]
FILLER_COUNTER_CASES = [pytest.param(f.word, *text.split(" → "), id=f"filler-{f.word}-counter")
                        for f in CUES.fillers for text in f.counter_examples]


@pytest.mark.parametrize(("section", "cue", "text", "expected"), PATTERN_CASES)
def test_every_cue_matches_its_examples_and_not_its_counter_examples(section, cue, text, expected):
    assert bool(cue.compiled.search(text)) is expected


@pytest.fixture(scope="module")
def judge(samples):
    return AnswerabilityJudge(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)


@pytest.mark.parametrize(("word", "question"), FILLER_CASES)
def test_a_filler_is_never_looked_for(judge, word, question):
    assert word in judge.tokenizer.tokens(question)  # the tokenizer keeps it: the entry is needed
    assert word not in {c.word for c in judge.concepts(question)}


@pytest.mark.parametrize(("word", "question", "topic"), FILLER_COUNTER_CASES)
def test_the_topic_beside_a_filler_is_still_looked_for(judge, word, question, topic):
    assert topic in {c.word for c in judge.concepts(question)}


def test_a_formal_inquiry_asks_after_its_situation():
    question = "회사가 휴게실을 새로 만든 뒤 다른 건물로 옮긴 경우, 옮긴 기간도 근로시간에 해당하는지"
    parts = split_question(question, CUES)
    core, story = next(iter((c, s) for _, c, s in parts.cores()))
    assert core == "옮긴 기간도 근로시간에 해당하는지" and story.endswith("옮긴 경우")


def test_a_chatty_story_before_the_question_is_story():
    parts = split_question("어제 사장이 그만 나오래요. 이렇게 끝났는데 남은 수당은 받을 수 있나요?", CUES)
    cores = [c for _, c, _ in parts.cores()]
    assert cores[0] == "남은 수당은 받을 수 있나요?" and cores[-1].startswith("어제")


def test_a_question_without_a_story_is_its_own_core(judge):
    assert judge.core("연차휴가는 며칠이에요?") == ("연차휴가는 며칠이에요?", "")


def test_the_core_grows_back_until_it_names_a_topic(judge):
    # "아무것도 못 받아요?" names nothing (a filler and a verb): the clause before it is part of the asked thing.
    core, _ = judge.core("출장 다녀와서 여비 정산을 안 해 줬는데 아무것도 못 받아요?")
    assert "여비" in core and "아무것" in core


def test_a_bad_pattern_names_the_file_and_the_entry(tmp_path: Path):
    table = tmp_path / "question_core.yaml"
    table.write_text("asks:\n  - pattern: '(unclosed'\n    examples: [x]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"question_core.yaml:2: asks.0"):
        QuestionCues.load(table)
