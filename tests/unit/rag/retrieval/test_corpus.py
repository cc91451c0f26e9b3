from __future__ import annotations

from retrieval_samples import index_chunks, make_chunk

from rag.knowledge.store import ChunkStore, FileRecord
from rag.models import Scope
from rag.retrieval.corpus import TITLE_MARKER, IndexedCorpus, lexical_tokens, split_stored_tokens


def test_stored_tokens_keep_title_tokens_apart(kiwi_tokenizer):
    chunk = make_chunk("규정", "제1조", "연차휴가", "직원은 휴가를 쓴다.")
    stored = lexical_tokens(kiwi_tokenizer, [chunk])[0]
    body, title = split_stored_tokens(stored)
    assert TITLE_MARKER in stored
    assert "연차휴가" in title and "직원" in body


def test_tokens_from_an_older_tokenizer_are_recomputed(tmp_path, kiwi_tokenizer):
    store = ChunkStore(tmp_path / "index.sqlite")
    chunk = make_chunk("규정", "제1조", "육아휴직", "직원은 육휴를 쓸 수 있다.")
    record = FileRecord(path="/r.md", collection="default", doc="규정", file_hash="h", chunk_count=1)
    store.replace_file(record, [chunk], [["옛날", "토큰"]])  # no marker: written before the title field existed
    corpus = IndexedCorpus(store, None, kiwi_tokenizer, index_dir=tmp_path / "bm25")
    found = corpus.lexical.search(["육휴"], 1)
    assert [corpus.chunks[i].chunk_id for i, _ in found] == [chunk.chunk_id]


def test_lexical_index_is_saved_and_reused_after_a_restart(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [make_chunk("규정", "제1조", "휴가", "휴가는 15일이다.")])
    assert (tmp_path / "bm25" / "CURRENT").exists()
    again = IndexedCorpus(corpus.store, None, kiwi_tokenizer, index_dir=tmp_path / "bm25")
    assert again.lexical.chunk_ids == corpus.lexical.chunk_ids


def test_refresh_picks_up_a_new_ingest(tmp_path, kiwi_tokenizer):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [make_chunk("규정", "제1조", "휴가", "휴가는 15일이다.")])
    added = make_chunk("출장 규정", "제1조", "여비", "여비는 실비로 준다.")
    record = FileRecord(path="/trip.md", collection="default", doc="출장 규정", file_hash="t", chunk_count=1)
    corpus.store.replace_file(record, [added], lexical_tokens(kiwi_tokenizer, [added]))
    assert corpus.refresh()
    assert corpus.get(added.chunk_id) is not None
    assert not corpus.refresh()


def test_mask_applies_scope_status_and_dates(tmp_path, kiwi_tokenizer):
    chunks = [
        make_chunk("가", "제1조", "a", "본문", collection="hr"),
        make_chunk("나", "제1조", "b", "본문", collection="it"),
        make_chunk("다", "제1조", "c", "본문", status="폐지"),
        make_chunk("라", "제1조", "d", "삭제", deleted=True),
        make_chunk("마", "제1조", "e", "본문", audience="faculty"),
        make_chunk("바", "제1조", "f", "본문", effective_date="2031-01-01"),
    ]
    corpus = index_chunks(tmp_path, kiwi_tokenizer, chunks)
    docs = lambda mask: {c.doc for c, keep in zip(corpus.chunks, mask, strict=True) if keep}  # noqa: E731
    assert docs(corpus.mask(Scope())) == {"가", "나", "마", "바"}
    assert docs(corpus.mask(Scope(collections=("hr",)))) == {"가"}
    assert "다" in docs(corpus.mask(Scope(), include_repealed=True))
    assert "라" in docs(corpus.mask(Scope(), include_deleted=True))
    assert "마" not in docs(corpus.mask(Scope(audience="staff")))
    assert "바" not in docs(corpus.mask(Scope(), effective_on="2026-01-01"))
