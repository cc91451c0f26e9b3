"""Retrieval at 100× our corpus: a synthetic 200k-chunk deployment (DESIGN.md §3 "Scale benchmark").

The chunks are generated from the bundled samples' structure: documents of ~100 articles with headers, titles
and bodies recombined from the samples' sentences, with numbers, nouns and a per-document term varied (text that
varies, not copies). Sentences are tokenised by the real Kiwi once; a chunk's tokens are its pieces' tokens, so
200k chunks need no 200k Kiwi calls (Kiwi's own cost per chunk is measured and reported on the side). Vectors
come from a fast deterministic embedder (hashed tokens → fixed random directions): the benchmark measures the
store, BM25, Chroma and retrieval, not the model (the real model's ingest rate is `benchmarks/ingest.py`).

Reported (JSON on stdout, a table on stderr), beside the naive baseline each step replaces:
  - ingest: chunk store (SQLite) and Chroma writes (embedded; a `chroma run` server on a 10k probe), chunks/s;
  - start-up: building the corpus from the store (BM25 built, vectors read from Chroma) vs loading the saved form
    (memory-mapped BM25 and vector mirror), each in a fresh process, with its resident memory;
  - update: one new 100-chunk document — the BM25 rebuild it costs (bm25s cannot add documents to an index) and
    the whole refresh, vectors of unchanged chunks reused;
  - retrieval p50/p95: HybridRetriever over the vector mirror (embedded), lexical only, and with dense search in
    Chroma (embedded client, and a `chroma run` server on 127.0.0.1).

    .venv/bin/python benchmarks/scale.py [--chunks 200000] [--queries 200] [--out FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from rag.knowledge.chunker import ArticleChunker  # noqa: E402
from rag.knowledge.loaders import LoaderRegistry  # noqa: E402
from rag.knowledge.parser import RegulationParser  # noqa: E402
from rag.knowledge.store import ChunkStore, FileRecord  # noqa: E402
from rag.lang.script import STATUTE_SENTENCE_BREAK  # noqa: E402
from rag.models import Chunk  # noqa: E402
from rag.retrieval.corpus import TITLE_MARKER  # noqa: E402

CHUNKS_PER_DOC = 100
PROBE_CHUNKS = 10_000  # written to the Chroma server to measure its write rate
ORGS = ["한빛", "누리", "가람", "다온", "새롬", "미르", "하람", "온새", "아라", "별빛", "초록", "해솔"]
KINDS = ["규정", "지침", "세칙", "규칙", "요령", "기준"]
TOPICS = ["인사", "복무", "보수", "여비", "연구윤리", "학사", "회계", "계약", "보안", "안전", "복리후생", "교육훈련",
          "감사", "정보공개", "개인정보", "시설관리", "차량운영", "재난대응", "포상", "징계"]
SYLLABLES = list("가나다라마바사아자차카타파하고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후")
QUESTIONS = ["{t} 기준이 어떻게 돼?", "{d}에서 {t}은 누가 정해?", "{t} 신청은 언제까지 해야 해?",
             "{t} 관련해서 예외가 있어?", "{d} {t} 알려줘"]


class HashingProjectionEmbedder:
    """Deterministic and fast: each token adds a fixed random direction (seeded by its hash); no model."""

    name = "scale-hashing"
    dim = 384

    def __init__(self, tokenizer=None) -> None:
        self.tokenizer = tokenizer
        self._directions: dict[str, np.ndarray] = {}

    def _direction(self, token: str) -> np.ndarray:
        found = self._directions.get(token)
        if found is None:
            seed = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            found = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            self._directions[token] = found
        return found

    def vector_of_tokens(self, tokens: Sequence[str]) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in tokens:
            vector += self._direction(token)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def _tokens(self, text: str) -> list[str]:
        return self.tokenizer.tokens(text) if self.tokenizer is not None else text.split()

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector_of_tokens(self._tokens(t)).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector_of_tokens(self._tokens(text)).tolist()


# --- the synthetic corpus --------------------------------------------------------------------------------------


class SampleStructure:
    """What the generator draws from: the samples' sentences (with their Kiwi tokens) and article titles."""

    def __init__(self, tokenizer) -> None:
        loaders, parser, chunker = LoaderRegistry(), RegulationParser(), ArticleChunker()
        chunks: list[Chunk] = []
        for path in sorted((REPO / "samples").glob("*.md")):
            chunks += chunker.chunk(parser.parse(loaders.load(path), fallback_name=path.stem))
        sentences: list[str] = []
        for chunk in chunks:
            for line in chunk.text.split("\n")[1:]:
                sentences += [s.strip() for s in STATUTE_SENTENCE_BREAK.split(line) if len(s.strip()) > 8]
        self.sentences = sorted(set(sentences))
        self.titles = sorted({c.title for c in chunks if c.title})
        started = time.perf_counter()
        self.sentence_tokens = tokenizer.tokens_many(self.sentences)
        self.kiwi_ms_per_sentence = (time.perf_counter() - started) * 1000 / max(len(self.sentences), 1)
        self.title_tokens = dict(zip(self.titles, tokenizer.tokens_many(self.titles), strict=True))
        words = sorted({t for toks in self.sentence_tokens for t in toks if len(t) > 1 and not t[0].isdigit()})
        self.nouns = [w for w in words if not w.endswith("다")]
        self.word_tokens = dict(zip(ORGS + KINDS + TOPICS, tokenizer.tokens_many(ORGS + KINDS + TOPICS),
                                    strict=True))


def synthetic_documents(structure: SampleStructure, chunks: int, seed: int = 7):
    """Yields (doc name, chunks, tokens) for `chunks` chunks in documents of CHUNKS_PER_DOC."""
    rng = random.Random(seed)
    made = 0
    doc_number = 0
    while made < chunks:
        doc_number += 1
        org, topic, kind = rng.choice(ORGS), rng.choice(TOPICS), rng.choice(KINDS)
        doc = f"{org} {topic} {kind} {doc_number}"
        doc_tokens = [*structure.word_tokens[org], *structure.word_tokens[topic], *structure.word_tokens[kind],
                      str(doc_number)]
        # A term only this document uses (a system name, a form code): real corpora's long vocabulary tail.
        own_term = "".join(rng.choice(SYLLABLES) for _ in range(3)) + "제도"
        size = min(CHUNKS_PER_DOC, chunks - made)
        doc_chunks: list[Chunk] = []
        doc_token_lists: list[list[str]] = []
        for article in range(1, size + 1):
            title = rng.choice(structure.titles)
            picks = rng.sample(range(len(structure.sentences)), k=rng.randint(2, 5))
            lines: list[str] = []
            tokens: list[str] = []
            swap_from, swap_to = rng.choice(structure.nouns), rng.choice(structure.nouns)
            for i in picks:
                sentence = structure.sentences[i].replace(swap_from, swap_to)
                sentence = re.sub(r"\d+", lambda m: str(rng.randint(1, 90)), sentence)
                lines.append(sentence)
                tokens += [swap_to if t == swap_from else t for t in structure.sentence_tokens[i]
                           if not t[0].isdigit()]
            if rng.random() < 0.3:
                lines.append(f"이 조의 절차는 {own_term}에 따른다.")
                tokens.append(own_term)
            header = f"{doc} 제{article}조({title})"
            text = header + "\n" + " ".join(lines)
            chunk_id = hashlib.sha1(f"{doc}|{article}".encode()).hexdigest()[:24]
            doc_chunks.append(Chunk(chunk_id=chunk_id, doc=doc, article=f"제{article}조", title=title, text=text,
                                    collection="default", status="시행", source_path=f"/synthetic/{doc}.md",
                                    content_hash=hashlib.sha1(text.encode()).hexdigest()))
            title_tokens = structure.title_tokens[title]
            doc_token_lists.append([*doc_tokens, f"제{article}조", *title_tokens, *tokens, TITLE_MARKER,
                                    *title_tokens])
        made += size
        yield doc, doc_chunks, doc_token_lists


# --- measurement helpers ---------------------------------------------------------------------------------------


def progress(step: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {step}", file=sys.stderr, flush=True)


def rss_mb(pid: int | None = None) -> float:
    """Resident memory now (MB) of this process or `pid`."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    return round(int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024, 1)


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ChromaServer:
    """`chroma run` on 127.0.0.1 and a free port, stopped at the end."""

    def __init__(self, path: Path) -> None:
        self.port = free_port()
        binary = Path(sys.executable).parent / "chroma"
        self.process = subprocess.Popen(
            [str(binary), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "warn"})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("chroma run did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def build_retrieval(data_dir: Path, tokenizer, *, chroma_url: str = "", mirror: bool = True, dense: bool = True):
    """The corpus and retriever the product builds, over `data_dir` (timed by the caller)."""
    from rag.retrieval.corpus import IndexedCorpus
    from rag.retrieval.dense import DenseIndex, open_chroma_client
    from rag.retrieval.query import QueryAnalyzer
    from rag.retrieval.retriever import HybridRetriever

    embedder = HashingProjectionEmbedder(tokenizer)
    index = None
    if dense:
        index = DenseIndex(lambda: open_chroma_client(chroma_url=chroma_url, persist_dir=data_dir / "chroma"),
                           embedder)
    corpus = IndexedCorpus(ChunkStore(data_dir / "index.sqlite"), index, tokenizer, mirror_vectors=mirror)
    return corpus, HybridRetriever(corpus, QueryAnalyzer(tokenizer))


def load_in_fresh_process(data_dir: Path) -> dict:
    """Start-up as a new replica sees it: time to a searchable corpus and its resident memory."""
    out = subprocess.run([sys.executable, __file__, "--load-only", str(data_dir)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def load_only(data_dir: Path) -> None:
    from rag.retrieval.tokenizer import KiwiTokenizer

    tokenizer = KiwiTokenizer(cache_dir=data_dir)
    tokenizer.tokens("준비")
    before = rss_mb()
    started = time.perf_counter()
    corpus, retriever = build_retrieval(data_dir, tokenizer)
    seconds = time.perf_counter() - started
    retriever.search_sync("휴가 신청 기준", k=10)
    print(json.dumps({"seconds": round(seconds, 2), "rss_mb": rss_mb(), "corpus_rss_mb": round(rss_mb() - before, 1),
                      "chunks": len(corpus.chunks), "vectors_mmap": isinstance(corpus.vectors, np.memmap)}))


def time_queries(retriever, queries: Sequence[str]) -> dict[str, float]:
    for query in queries:  # warm: Kiwi, the embedder's token directions, masks
        retriever.search_sync(query, k=10)
    samples: list[float] = []
    for query in queries:
        started = time.perf_counter()
        retriever.search_sync(query, k=10)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def run(args: argparse.Namespace, work: Path) -> dict:
    from rag.retrieval.dense import DenseIndex, open_chroma_client
    from rag.retrieval.lexical import LexicalIndex
    from rag.retrieval.tokenizer import KiwiTokenizer

    result: dict = {"chunks": args.chunks, "load_average": os.getloadavg()[0]}
    tokenizer = KiwiTokenizer(cache_dir=work)
    structure = SampleStructure(tokenizer)
    result["kiwi_ms_per_sentence"] = round(structure.kiwi_ms_per_sentence, 2)

    # 1. generate and write the chunk store (what ingest does after tokenising)
    store = ChunkStore(work / "index.sqlite")
    started = time.perf_counter()
    documents = list(synthetic_documents(structure, args.chunks))
    result["generate_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    for doc, chunks, tokens in documents:
        record = FileRecord(path=f"/synthetic/{doc}.md", collection="default", doc=doc, file_hash=doc,
                            chunk_count=len(chunks))
        store.replace_file(record, chunks, tokens)
    seconds = time.perf_counter() - started
    result["store_ingest"] = {"seconds": round(seconds, 1), "chunks_per_s": round(args.chunks / seconds)}
    progress("chunk store written")
    all_chunks = [c for _, chunks, _ in documents for c in chunks]
    all_tokens = [t for _, _, tokens in documents for t in tokens]

    # 2. vectors: the fast embedder over a chunk's first 40 tokens (about what the model reads: the header and
    # the first 200 characters)
    embedder = HashingProjectionEmbedder(tokenizer)
    started = time.perf_counter()
    vectors = np.stack([embedder.vector_of_tokens(t[:40]) for t in all_tokens])
    result["embed_s"] = round(time.perf_counter() - started, 2)

    # 3. Chroma writes: embedded, then a `chroma run` server (DenseIndex.add_vectors: upserts of 1000)
    def fill(index: DenseIndex, chunks: Sequence[Chunk]) -> dict:
        started = time.perf_counter()
        batch = 5000
        for start in range(0, len(chunks), batch):
            index.add_vectors(chunks[start:start + batch], vectors[start:start + batch])
        seconds = time.perf_counter() - started
        return {"chunks": len(chunks), "seconds": round(seconds, 1), "chunks_per_s": round(len(chunks) / seconds)}

    embedded = DenseIndex(open_chroma_client(persist_dir=work / "chroma"), embedder)
    result["chroma_embedded_ingest"] = fill(embedded, all_chunks)
    progress("Chroma embedded filled")
    # The server serves a copy of the embedded data (same on-disk format), so the collection is not written
    # twice; its write rate is measured on a separate probe collection.
    shutil.copytree(work / "chroma", work / "chroma-server")
    server = ChromaServer(work / "chroma-server")
    try:
        probe = DenseIndex(open_chroma_client(chroma_url=server.url), embedder, collection_name="probe")
        result["chroma_server_ingest"] = fill(probe, all_chunks[:PROBE_CHUNKS])
        result["chroma_server_rss_mb"] = rss_mb(server.process.pid)
        progress("Chroma server probed")

        # 4. BM25 build alone, and start-up: built from the store vs loaded from the saved form (fresh processes)
        bodies = [t[: t.index(TITLE_MARKER)] for t in all_tokens]
        titles = [t[t.index(TITLE_MARKER) + 1:] for t in all_tokens]
        started = time.perf_counter()
        LexicalIndex([c.chunk_id for c in all_chunks], bodies, titles=titles)
        result["bm25_build_s"] = round(time.perf_counter() - started, 2)
        del bodies, titles
        result["startup_cold_build"] = load_in_fresh_process(work)  # builds BM25, reads Chroma, saves both
        progress("cold start measured")
        result["startup_saved"] = load_in_fresh_process(work)  # memory-maps them
        progress("saved-form start measured")

        # 5. retrieval latency
        rng = random.Random(11)
        queries = [rng.choice(QUESTIONS).format(t=rng.choice(structure.titles), d=rng.choice(all_chunks).doc)
                   for _ in range(args.queries)]
        corpus, retriever = build_retrieval(work, tokenizer)
        result["retrieval_embedded_mirror"] = time_queries(retriever, queries)
        progress("retrieval over the mirror measured")
        lexical_only = build_retrieval(work, tokenizer, dense=False)[1]
        result["retrieval_lexical_only"] = time_queries(lexical_only, queries)
        few = queries[: max(20, args.queries // 4)]
        result["retrieval_chroma_embedded"] = time_queries(build_retrieval(work, tokenizer, mirror=False)[1], few)
        result["retrieval_chroma_server"] = time_queries(
            build_retrieval(work, tokenizer, chroma_url=server.url, mirror=False)[1], few)

        # 6. an update: one new document, refreshed in the running process
        extra = next(synthetic_documents(structure, CHUNKS_PER_DOC, seed=99))
        doc, chunks, tokens = extra
        doc = f"신규 {doc}"
        chunks = [c.model_copy(update={"doc": doc, "chunk_id": "n" + c.chunk_id[1:]}) for c in chunks]
        extra_vectors = [embedder.vector_of_tokens(t[:40]) for t in tokens]
        embedded.add_vectors(chunks, extra_vectors)
        store.replace_file(FileRecord(path=f"/synthetic/{doc}.md", collection="default", doc=doc, file_hash=doc,
                                      chunk_count=len(chunks)), chunks, tokens)
        started = time.perf_counter()
        corpus.refresh()
        result["update_one_document_refresh_s"] = round(time.perf_counter() - started, 2)
        result["update_note"] = ("bm25s has no incremental add: an update rebuilds both BM25 fields "
                                 "(bm25_build_s) and re-reads only the new chunks' vectors from Chroma")
    finally:
        server.stop()
    result["process_rss_mb"] = rss_mb()
    result["process_max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def table(result: dict) -> str:
    rows = [
        ("store ingest (SQLite)", f"{result['store_ingest']['chunks_per_s']} chunks/s"),
        ("Chroma ingest, embedded", f"{result['chroma_embedded_ingest']['chunks_per_s']} chunks/s"),
        ("Chroma ingest, server (10k probe)", f"{result['chroma_server_ingest']['chunks_per_s']} chunks/s"),
        ("BM25 build (= an update's rebuild)", f"{result['bm25_build_s']} s"),
        ("refresh after one new document", f"{result['update_one_document_refresh_s']} s"),
        ("start-up, built (baseline)", f"{result['startup_cold_build']['seconds']} s, "
                                       f"{result['startup_cold_build']['rss_mb']} MB"),
        ("start-up, saved form (mmap)", f"{result['startup_saved']['seconds']} s, "
                                        f"{result['startup_saved']['rss_mb']} MB"),
        ("Chroma server RSS", f"{result['chroma_server_rss_mb']} MB"),
    ]
    for name in ("embedded_mirror", "lexical_only", "chroma_embedded", "chroma_server"):
        r = result[f"retrieval_{name}"]
        rows.append((f"retrieval {name.replace('_', ' ')}", f"p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms"))
    width = max(len(r[0]) for r in rows)
    lines = [f"scale benchmark: {result['chunks']} chunks, load average {result['load_average']:.1f}"]
    lines += [f"  {name.ljust(width)}  {value}" for name, value in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep", type=Path, help="build in this directory and keep it")
    parser.add_argument("--load-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_only:
        load_only(args.load_only)
        return 0
    work = args.keep or Path(tempfile.mkdtemp(prefix="regbot-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        result = run(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    print(table(result), file=sys.stderr)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
