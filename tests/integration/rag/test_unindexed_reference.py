"""A reference is looked up, never searched: one naming a regulation that is not indexed says so, instead of
quoting some other regulation's article found by search (bundled samples, no statute indexed)."""

import pytest

from rag import messages
from rag.models import Route
from rag.pipeline import collect


@pytest.mark.parametrize("question", ["근로기준법 제60조 보여줘", "인사관리규정 제3조", "「연구윤리 지침」 제2조"])
async def test_a_reference_to_a_regulation_not_indexed_says_it_is_not_registered(sample_components, question):
    answer, _ = await collect(sample_components.pipeline, question)
    name = question.split(" 제")[0].strip("「」")
    assert answer.route == Route.LOOKUP
    assert answer.text.strip() == messages.LOOKUP_DOC_NOT_INDEXED.format(doc=name)
    assert answer.citations == ()


async def test_an_indexed_regulation_is_still_looked_up(sample_components):
    answer, _ = await collect(sample_components.pipeline, "취업규칙 제20조 보여줘")
    assert answer.route == Route.LOOKUP and answer.citations[0].label.startswith("취업규칙 제20조")


async def test_a_question_that_names_no_regulation_is_still_searched(sample_components):
    answer, _ = await collect(sample_components.pipeline, "출장 숙박비 규정이 어떻게 돼?")
    assert answer.route == Route.SEARCH
