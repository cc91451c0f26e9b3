"""SemanticAnswerCache: exact and reworded questions, scope and index-version isolation, expiry."""

import math

import pytest

from rag.cache import CachedAnswer, MemoryCacheBackend, SemanticAnswerCache
from rag.errors import RegbotError
from rag.models import Citation, Scope
from tests.fakes.clock import FakeClock

LEAVE = "입사 1년 지나면 연차 며칠 받아?"


class TableEmbedder:
    """Vectors by table, so the test decides which questions are close: angle in degrees on a unit circle."""

    name = "table"
    dim = 2

    def __init__(self, angles: dict[str, float]) -> None:
        self.angles = angles

    def embed_query(self, text: str) -> list[float]:
        angle = math.radians(self.angles[text])
        return [math.cos(angle), math.sin(angle)]

    def embed_passages(self, texts):
        return [self.embed_query(t) for t in texts]


def answer(question=LEAVE, text="15일의 연차유급휴가를 받아요 [1]."):
    return CachedAnswer(question=question, text=text, retrieved_ids=("c1",),
                        citations=(Citation(index=1, doc="취업규칙", article="제20조", paragraph="①"),))


@pytest.fixture
def version():
    return {"value": 3}


def make_cache(version, angles=None, backend=None, **options):
    return SemanticAnswerCache(backend or MemoryCacheBackend(), index_version=lambda: version["value"],
                               embedder=TableEmbedder(angles) if angles is not None else None, **options)


async def test_the_same_question_with_other_spacing_and_punctuation_hits(version):
    cache = make_cache(version)
    await cache.store(LEAVE, Scope(), answer())
    match = await cache.lookup("입사1년 지나면 연차 며칠 받아", Scope())
    assert match.similarity == 1.0
    assert match.answer.citations[0].article == "제20조"


async def test_a_reworded_question_hits_above_the_threshold_only(version):
    angles = {LEAVE: 0.0, "입사하고 1년 지나면 연차가 며칠이야?": 10.0, "입사 1년 지나면 병가 며칠 받아?": 20.0}
    cache = make_cache(version, angles, threshold=0.97)  # cos 10° ≈ 0.985, cos 20° ≈ 0.94
    await cache.store(LEAVE, Scope(), answer())
    reworded = await cache.lookup("입사하고 1년 지나면 연차가 며칠이야?", Scope())
    assert reworded.answer.text == "15일의 연차유급휴가를 받아요 [1]."
    assert 0.98 < reworded.similarity < 0.99
    assert await cache.lookup("입사 1년 지나면 병가 며칠 받아?", Scope()) is None


async def test_questions_with_other_numbers_never_match(version):
    cache = make_cache(version, {LEAVE: 0.0, "입사 3년 지나면 연차 며칠 받아?": 1.0})
    await cache.store(LEAVE, Scope(), answer())
    assert await cache.lookup("입사 3년 지나면 연차 며칠 받아?", Scope()) is None


async def test_entries_are_scoped_by_collection_and_audience(version):
    cache = make_cache(version)
    await cache.store(LEAVE, Scope(collections=("hr",), audience="staff"), answer())
    assert await cache.lookup(LEAVE, Scope(collections=("hr",), audience="staff")) is not None
    assert await cache.lookup(LEAVE, Scope(collections=("hr",), audience="contractor")) is None
    assert await cache.lookup(LEAVE, Scope()) is None


async def test_a_new_index_version_invalidates_every_entry(version):
    cache = make_cache(version, {LEAVE: 0.0})
    await cache.store(LEAVE, Scope(), answer())
    version["value"] = 4  # ingest ran
    assert await cache.lookup(LEAVE, Scope()) is None


async def test_entries_expire_after_their_ttl():
    clock = FakeClock(start=0.0)
    cache = make_cache({"value": 1}, backend=MemoryCacheBackend(clock=clock), ttl_s=60)
    await cache.store(LEAVE, Scope(), answer())
    clock.now = 59
    assert await cache.lookup(LEAVE, Scope()) is not None
    clock.now = 61
    assert await cache.lookup(LEAVE, Scope()) is None


async def test_an_unreachable_backend_is_a_miss_not_an_error(version):
    class DownBackend:
        async def cache_get(self, key):
            raise RegbotError("redis is down")

        async def cache_set(self, key, value, ttl_s):
            raise RegbotError("redis is down")

    cache = make_cache(version, {LEAVE: 0.0}, backend=DownBackend())
    await cache.store(LEAVE, Scope(), answer())
    assert await cache.lookup(LEAVE, Scope()) is None


async def test_the_memory_backend_drops_the_least_recently_used_entry():
    backend = MemoryCacheBackend(max_entries=2)
    await backend.cache_set("a", 1, 60)
    await backend.cache_set("b", 2, 60)
    await backend.cache_get("a")
    await backend.cache_set("c", 3, 60)
    assert [await backend.cache_get(k) for k in "abc"] == [1, None, 3]
