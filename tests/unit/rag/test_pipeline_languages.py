"""The pipeline and the asker's language: what changes for an English or Vietnamese question."""

from __future__ import annotations

from rag.cache import MemoryCacheBackend, SemanticAnswerCache
from rag.models import Hit, Scope
from rag.pipeline import collect
from tests.unit.rag.test_pipeline import PASS, FakeGrader, FakeRetriever, build, make_chunk

ENGLISH_QUESTION = "How long is maternity leave for a first child?"


async def test_an_english_answer_is_never_cached_so_no_korean_twin_is_served_from_it():
    cache = SemanticAnswerCache(MemoryCacheBackend(), index_version=lambda: 1)
    retriever = FakeRetriever([Hit(chunk=make_chunk(), score=1.0)])
    pipeline = build(cache=cache, retriever=retriever, grader=FakeGrader(PASS, PASS))

    await collect(pipeline, ENGLISH_QUESTION)
    await collect(pipeline, ENGLISH_QUESTION)

    assert retriever.queries == [ENGLISH_QUESTION, ENGLISH_QUESTION]
    assert await cache.lookup(ENGLISH_QUESTION, Scope()) is None


async def test_the_first_status_line_is_in_the_askers_language():
    _, events = await collect(build(), ENGLISH_QUESTION)

    assert events[0].text == "Reading your question…"
