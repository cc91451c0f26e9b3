"""The "개정 내역" cues (rag/data/changes.yaml), run through the file's own examples and counter-examples, and the
route they give a question before any LLM call."""

from __future__ import annotations

import pytest

from rag.models import Route
from rag.stages.changes import ChangeCues
from rag.stages.enhancer import OfflineQueryEnhancer
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.router import OfflineQueryRouter
from rag.stages.understanding import LlmQueryUnderstander, OfflineQueryUnderstander

CUES = ChangeCues()


def test_the_cue_file_has_examples_on_both_sides():
    assert CUES.patterns and len(CUES.examples) >= 5 and len(CUES.counter_examples) >= 5


@pytest.mark.parametrize("question", CUES.examples)
def test_a_question_about_what_changed_is_recognised(question):
    assert CUES.asks(question)


@pytest.mark.parametrize("question", CUES.counter_examples)
def test_a_question_that_only_mentions_a_change_is_not(question):
    assert not CUES.asks(question)


@pytest.mark.parametrize("with_cues", [True, False])
async def test_a_change_question_is_a_lookup_caught_before_any_llm_call(samples, scripted_llm, with_cues):
    router = OfflineQueryRouter(samples.lookup, samples.tokenizer, changes=CUES if with_cues else None)
    offline = OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(), router=router,
                                       planner=OfflineQueryPlanner(samples.tokenizer))
    llm = scripted_llm()  # no reply scripted: a call would fall back offline, and be recorded
    understood = await LlmQueryUnderstander(llm, fallback=offline, lookup=samples.lookup).run("취업규칙 개정 내역", ())
    assert understood.decision.route == (Route.LOOKUP if with_cues else Route.SEARCH)
    assert (llm.requests == []) is with_cues
