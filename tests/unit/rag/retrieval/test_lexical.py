from __future__ import annotations

import numpy as np

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
