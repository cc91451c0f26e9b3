"""The corpus's dense-vector mirror: saved beside the lexical index, memory-mapped at the next start, so a
question is answered with dense retrieval without opening Chroma (real Kiwi and Chroma, deterministic embedder)."""

from rag.errors import RetrievalUnavailable
from rag.knowledge.store import ChunkStore
from rag.models import Scope
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.dense import DenseIndex
from testkit import HashingEmbedder


class UnreachableChroma:
    """A client factory that fails as a stopped Chroma server does, and counts the attempts."""

    def __init__(self) -> None:
        self.attempts = 0

    def __call__(self):
        self.attempts += 1
        raise RetrievalUnavailable("connection refused")


def test_chroma_down_and_no_saved_vectors_leaves_lexical_search_working(tmp_path, sample_components,
                                                                        kiwi_tokenizer):
    chroma = UnreachableChroma()
    corpus = IndexedCorpus(sample_components.store, DenseIndex(chroma, HashingEmbedder()), kiwi_tokenizer,
                           index_dir=tmp_path / "bm25")
    assert chroma.attempts == 1 and corpus.vectors is None
    found = corpus.lexical.search(["연차"], 3)
    assert corpus.chunks[found[0][0]].doc == "취업규칙"


def test_restart_reads_dense_vectors_from_the_mirror_without_opening_chroma(sample_components, kiwi_tokenizer):
    before = sample_components.corpus
    chroma = UnreachableChroma()
    restarted = IndexedCorpus(ChunkStore(before.store.path), DenseIndex(chroma, HashingEmbedder()), kiwi_tokenizer)
    assert chroma.attempts == 0
    assert restarted.vectors is not None and restarted.has_vector.all()
    vector = HashingEmbedder().embed_query("출장 가면 숙박비는 얼마까지 나와?")
    top = lambda corpus: [corpus.chunks[i].chunk_id  # noqa: E731
                          for i, _ in corpus.dense_search(vector, 3, corpus.mask(Scope()))]
    assert top(restarted) == top(before)


def test_an_ingest_adds_vectors_for_new_chunks_and_keeps_the_others(tmp_path, kiwi_tokenizer):
    from rag.knowledge.ingest import Ingestor
    from rag.retrieval.dense import open_chroma_client

    folder = tmp_path / "regs"
    folder.mkdir()
    (folder / "휴가 규정.md").write_text("# 휴가 규정\n\n제1조(연차) 직원은 매년 15일의 연차휴가를 쓴다.\n",
                                      encoding="utf-8")
    store = ChunkStore(tmp_path / "index.sqlite")
    dense = DenseIndex(open_chroma_client(persist_dir=tmp_path / "chroma"), HashingEmbedder())
    ingestor = Ingestor(store, dense, kiwi_tokenizer)
    assert not ingestor.ingest([folder]).failed
    corpus = IndexedCorpus(store, dense, kiwi_tokenizer)
    before = {c.chunk_id: corpus.vectors[i].copy() for i, c in enumerate(corpus.chunks)}

    (folder / "출장 규정.md").write_text("# 출장 규정\n\n제1조(숙박비) 출장 숙박비는 실비로 지급한다.\n",
                                      encoding="utf-8")
    assert not ingestor.ingest([folder]).failed
    assert corpus.refresh()
    assert corpus.has_vector.all() and len(corpus.chunks) > len(before)
    for chunk_id, vector in before.items():
        assert (corpus.vectors[corpus.position[chunk_id]] == vector).all()
    vector = HashingEmbedder().embed_query("출장 숙박비")
    best = corpus.dense_search(vector, 1, corpus.mask(Scope()))[0][0]
    assert corpus.chunks[best].doc == "출장 규정"
