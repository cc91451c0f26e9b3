"""The "개정 내역" cues (rag/data/changes.yaml), run through the file's own examples and counter-examples."""

from __future__ import annotations

import pytest

from rag.stages.changes import ChangeCues

CUES = ChangeCues()


def test_the_cue_file_has_examples_on_both_sides():
    assert CUES.patterns and len(CUES.examples) >= 5 and len(CUES.counter_examples) >= 5


@pytest.mark.parametrize("question", CUES.examples)
def test_a_question_about_what_changed_is_recognised(question):
    assert CUES.asks(question)


@pytest.mark.parametrize("question", CUES.counter_examples)
def test_a_question_that_only_mentions_a_change_is_not(question):
    assert not CUES.asks(question)
