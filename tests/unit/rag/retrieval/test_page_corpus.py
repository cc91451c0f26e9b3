"""Page-level text (plain pages, no 조 headings): the hybrid never ranks a right page below lexical alone at 5."""

import json
from pathlib import Path

import pytest
from retrieval_samples import index_chunks, make_chunk

from rag.retrieval.config import RetrievalConfig
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.retriever import HybridRetriever

PAGES = Path(__file__).resolve().parents[4] / "benchmarks" / "pages"


@pytest.fixture(scope="module")
def pages():
    return {p.stem: p.read_text(encoding="utf-8").strip() for p in sorted((PAGES / "corpus").glob("*.txt"))}


def recall_at_5(retriever, items) -> float:
    found = 0
    for item in items:
        docs = list(dict.fromkeys(h.chunk.doc for h in retriever.search_sync(item["question"], k=5)))
        found += item["page"] in docs
    return found / len(items)


@pytest.mark.parametrize("config", [RetrievalConfig(), RetrievalConfig(protect_depth=5)])
def test_hybrid_recall_at_5_on_plain_pages_is_at_least_lexical_alone(tmp_path, kiwi_tokenizer, pages, config):
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [make_chunk(name, "", "", text) for name, text in pages.items()])
    items = [json.loads(line) for line in (PAGES / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    analyzer = QueryAnalyzer(kiwi_tokenizer)
    lexical = recall_at_5(HybridRetriever(corpus, analyzer, config=RetrievalConfig(dense_weight=0)), items)
    hybrid = recall_at_5(HybridRetriever(corpus, analyzer, config=config), items)
    assert lexical >= 0.9
    assert hybrid >= lexical
