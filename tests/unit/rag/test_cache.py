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


async def test_an_answer_is_stored_under_the_index_its_turn_started_on(version):
    cache = make_cache(version, {LEAVE: 0.0})
    started_on = cache.index_identity()
    version["value"] = 4  # an ingest lands while the turn is answered from the old index

    await cache.store(LEAVE, Scope(), answer(text="3개월"), index=started_on)

    assert await cache.lookup(LEAVE, Scope()) is None
    assert (await cache.lookup(LEAVE, Scope(), index=started_on)).answer.text == "3개월"


async def test_a_rebuilt_data_dir_never_serves_an_old_answer(tmp_path):
    from rag.knowledge.store import ChunkStore, FileRecord
    from tests.unit.rag.test_pipeline import make_chunk

    def build(text: str) -> ChunkStore:
        store = ChunkStore(tmp_path / "data" / "index.sqlite")
        record = FileRecord(path="/rules/취업규칙.md", collection="default", doc="취업규칙", file_hash=text,
                            chunk_count=1)
        store.replace_file(record, [make_chunk(text=text)], [[text]])
        return store

    backend = MemoryCacheBackend()  # outlives the data dir, as Redis does
    old = build("수습기간은 3개월로 한다.")
    cache = SemanticAnswerCache(backend, index_version=old.identity)
    await cache.store(LEAVE, Scope(), answer(text="수습기간은 3개월이에요."))
    (tmp_path / "data" / "index.sqlite").unlink()
    for leftover in (tmp_path / "data").iterdir():
        leftover.unlink()

    new = build("수습기간은 6개월로 한다.")  # the same version number as the old index
    rebuilt = SemanticAnswerCache(backend, index_version=new.identity)

    assert new.version() == old.version() == 1
    assert await rebuilt.lookup(LEAVE, Scope()) is None
