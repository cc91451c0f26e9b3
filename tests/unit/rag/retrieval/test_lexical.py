from __future__ import annotations

import bm25s
import numpy as np
import pytest

from rag.retrieval.lexical import LexicalIndex

BODIES = [["휴가", "근로자", "15일"], ["임금", "지급", "휴가"], ["출장", "여비"]]
TITLES = [["연차", "휴가"], ["임금"], ["여비"]]


def test_title_field_adds_to_the_body_score():
    plain = LexicalIndex(["a", "b", "c"], BODIES)
    titled = LexicalIndex(["a", "b", "c"], BODIES, titles=TITLES, title_weight=1.0)
    assert titled.scores(["임금"])[1] > plain.scores(["임금"])[1]
    assert np.allclose(titled.scores(["임금"], title_weight=0.0), plain.scores(["임금"]))


def test_weighted_tokens_scale_their_contribution():
    index = LexicalIndex(["a", "b", "c"], BODIES)
    full = index.scores({"여비": 1.0})[2]
    half = index.scores({"여비": 0.5})[2]
    assert np.isclose(half, full / 2)


def test_unknown_tokens_and_empty_queries_score_nothing():
    index = LexicalIndex(["a", "b", "c"], BODIES)
    assert not index.scores(["없는말"]).any()
    assert index.search([], 3) == []


def test_mask_hides_chunks():
    index = LexicalIndex(["a", "b", "c"], BODIES)
    found = index.search(["휴가"], 3, mask=np.array([False, True, True]))
    assert [position for position, _ in found] == [1]


def test_saved_index_is_reused_only_for_the_same_key(tmp_path):
    index = LexicalIndex(["a", "b", "c"], BODIES, titles=TITLES)
    index.save(tmp_path / "bm25", key="v1")
    loaded = LexicalIndex.load(tmp_path / "bm25", key="v1")
    assert loaded is not None and loaded.chunk_ids == ["a", "b", "c"]
    assert np.allclose(loaded.scores(["휴가", "임금"]), index.scores(["휴가", "임금"]))
    assert LexicalIndex.load(tmp_path / "bm25", key="v2") is None
    assert LexicalIndex.load(tmp_path / "missing", key="v1") is None


def test_document_frequencies_are_read_from_the_index():
    index = LexicalIndex(["a", "b", "c"], [*BODIES[:2], []])
    assert index.doc_freq() == {"휴가": 2, "근로자": 1, "15일": 1, "임금": 1, "지급": 1}


class _Crash(Exception):
    pass


def test_a_save_that_dies_midway_leaves_the_old_index_in_force(tmp_path, monkeypatch):
    directory = tmp_path / "bm25"
    LexicalIndex(["a", "b", "c"], BODIES, titles=TITLES).save(directory, key="v1")
    newer = LexicalIndex(["a", "b"], BODIES[:2], titles=TITLES[:2])
    seen_during_save: list[LexicalIndex | None] = []
    real_save = bm25s.BM25.save

    def body_then_crash(self, path, **kwargs):
        real_save(self, path, **kwargs)
        if path.endswith("title"):
            # Another replica starting now, with the body already written: it still reads the whole old index.
            seen_during_save.append(LexicalIndex.load(directory, key="v1"))
            seen_during_save.append(LexicalIndex.load(directory, key="v2"))
            raise _Crash

    monkeypatch.setattr(bm25s.BM25, "save", body_then_crash)
    with pytest.raises(_Crash):
        newer.save(directory, key="v2")
    monkeypatch.undo()

    during_old, during_new = seen_during_save
    assert during_old is not None and during_old.chunk_ids == ["a", "b", "c"] and during_new is None
    after = LexicalIndex.load(directory, key="v1")
    assert after is not None and after.search(["여비"], 3)[0][0] == 2
    assert LexicalIndex.load(directory, key="v2") is None
    assert sorted(p.name for p in directory.iterdir() if p.name != "CURRENT") == [(directory / "CURRENT").read_text()]


def test_each_save_swaps_in_a_whole_build_and_old_builds_go(tmp_path, monkeypatch):
    directory = tmp_path / "bm25"
    monkeypatch.setattr("rag.retrieval.lexical._PRUNE_AFTER_S", 0.0)
    for version in range(4):
        LexicalIndex(["a", "b", "c"], BODIES, titles=TITLES).save(directory, key=f"v{version}")
    assert LexicalIndex.load(directory, key="v3") is not None
    builds = [p for p in directory.iterdir() if p.name.startswith("build-")]
    assert len(builds) == 2  # the one in force and the one before, for a reader that resolved it just before


def test_an_index_of_the_layout_before_builds_is_rebuilt_and_its_files_removed(tmp_path):
    directory = tmp_path / "bm25"
    directory.mkdir()
    (directory / "meta.json").write_text('{"key": "v1", "chunk_ids": ["a"]}', encoding="utf-8")
    (directory / "body").mkdir()
    assert LexicalIndex.load(directory, key="v1") is None
    LexicalIndex(["a", "b", "c"], BODIES).save(directory, key="v1")
    assert not (directory / "meta.json").exists() and not (directory / "body").exists()
    assert LexicalIndex.load(directory, key="v1") is not None


def test_two_replicas_saving_at_once_each_leave_a_whole_index(tmp_path, monkeypatch):
    directory = tmp_path / "bm25"
    first = LexicalIndex(["a", "b", "c"], BODIES, titles=TITLES)
    second = LexicalIndex(["a", "b"], BODIES[:2], titles=TITLES[:2])
    real_save = bm25s.BM25.save
    interleaved: list[str] = []

    def second_replica_saves_meanwhile(self, path, **kwargs):
        real_save(self, path, **kwargs)
        if not interleaved:
            interleaved.append(path)
            second.save(directory, key="v2")  # the other replica, sharing the volume, saves in the middle

    monkeypatch.setattr(bm25s.BM25, "save", second_replica_saves_meanwhile)
    first.save(directory, key="v1")
    monkeypatch.undo()

    loaded = LexicalIndex.load(directory, key="v1")  # the last swap wins, and it is whole
    assert loaded is not None and loaded.chunk_ids == ["a", "b", "c"]
    assert np.allclose(loaded.scores(["여비", "연차"]), first.scores(["여비", "연차"]))
