"""The searchable corpus in memory: chunks from the store, the BM25 index over them, and the dense index."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from rag.errors import RetrievalUnavailable
from rag.models import Chunk, Scope
from rag.retrieval.dense import DenseIndex
from rag.retrieval.lexical import LexicalIndex
from rag.retrieval.tokenizer import TOKENIZER_VERSION, Tokenizer

log = logging.getLogger(__name__)

# Separates a chunk's body tokens from its title tokens in the stored token list; it names the tokenizer
# version, so tokens from an older tokenizer are recomputed at load instead of silently mismatching queries.
TITLE_MARKER = f"§title§v{TOKENIZER_VERSION}"
_MARKER_PREFIX = "§title§"
REPEALED = "폐지"


def lexical_tokens(tokenizer: Tokenizer, chunks: Sequence[Chunk]) -> list[list[str]]:
    """Stored tokens of each chunk: its text (header included) then, after a marker, its article title."""
    bodies = tokenizer.tokens_many([c.text for c in chunks])
    titles = tokenizer.tokens_many([c.title for c in chunks])
    return [[*body, TITLE_MARKER, *title] for body, title in zip(bodies, titles, strict=True)]


def subordinate_documents(names: Sequence[str]) -> frozenset[str]:
    """The documents whose name extends another document's ("근로기준법 시행령" under "근로기준법"): a decree's
    details under its law, read from the names alone."""
    return frozenset(d for d in names if any(d != law and d.startswith(f"{law} ") for law in names))


def split_stored_tokens(tokens: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(body, title) tokens, or None when they come from another tokenizer version and must be recomputed."""
    try:
        cut = tokens.index(TITLE_MARKER)
    except ValueError:
        return None
    return list(tokens[:cut]), list(tokens[cut + 1:])


class ChunkSource(Protocol):
    """What the corpus reads from the chunk store (`rag.knowledge.store.ChunkStore`): retrieval depends on this
    protocol, not on the knowledge package, so knowledge (ingest) → retrieval is the only direction."""

    path: Path

    def version(self) -> int: ...

    def load(self, *, tokens: bool = True) -> tuple[list[Chunk], list[list[str]]]: ...


class IndexedCorpus:
    """Snapshot of the chunk store with its lexical index; `refresh` reloads when ingest changed the store.

    The lexical index is saved in `index_dir` (default: `bm25/` beside the store) and reused while the store
    holds the same chunks. With `mirror_vectors`, the dense vectors are also held here as one matrix aligned with
    the chunks (1.5 KB a chunk): scoring all of them takes ~2 ms at 38k chunks and honours every filter exactly,
    where a filtered Chroma query took ~10 ms at 1.9k chunks and ~200 ms at 38k. The matrix is saved beside the
    lexical index (`bm25-vectors/`) and memory-mapped at the next start, so a question never waits for Chroma.
    """

    def __init__(self, store: ChunkSource, dense: DenseIndex | None, tokenizer: Tokenizer, *,
                 index_dir: Path | None = None, mirror_vectors: bool = True) -> None:
        self.store = store
        self.dense = dense
        self.tokenizer = tokenizer
        self.index_dir = index_dir if index_dir is not None else store.path.parent / "bm25"
        self.vectors_dir = self.index_dir.with_name(self.index_dir.name + "-vectors")
        self.mirror_vectors = mirror_vectors
        self.vectors: np.ndarray | None = None  # (chunks, dim), unit rows; zeros where a chunk has no vector
        self.has_vector: np.ndarray = np.zeros(0, dtype=bool)
        self._lock = threading.Lock()
        self.version = -1
        self.subordinate: frozenset[str] = frozenset()  # `subordinate_documents` of the loaded chunks
        self.chunks: list[Chunk] = []
        self.position: dict[str, int] = {}
        self.lexical = LexicalIndex([], [])
        self.doc_freq: Counter[str] = Counter()
        self._columns: dict[str, np.ndarray] = {}
        self._masks: dict[tuple, np.ndarray] = {}
        self.refresh()

    def refresh(self) -> bool:
        """Reload from the store if it changed; True when it did."""
        version = self.store.version()
        if version == self.version:
            return False
        with self._lock:
            if version == self.version:
                return False
            chunks, _ = self.store.load(tokens=False)
            self.load_chunks(chunks)
            self.version = version
        log.info("corpus loaded: %d chunks (version %d)", len(chunks), version)
        return True

    def load_chunks(self, chunks: list[Chunk], stored: Sequence[Sequence[str]] | None = None) -> None:
        """Index `chunks`: the saved lexical index when it was built from them, else one built from their stored
        tokens (read from the store when not given; recomputed where the tokenizer changed since ingest)."""
        key = self._index_key(chunks)
        lexical = LexicalIndex.load(self.index_dir, key=key) if self.index_dir else None
        if lexical is None or lexical.chunk_ids != [c.chunk_id for c in chunks]:
            if stored is None:
                # Chunks and tokens from one read, in case an ingest ran since the chunks were read.
                chunks, stored = self.store.load()
                key = self._index_key(chunks)
            bodies, titles = self._tokens(chunks, stored)
            lexical = LexicalIndex([c.chunk_id for c in chunks], bodies, titles=titles)
            if self.index_dir and chunks:
                try:
                    lexical.save(self.index_dir, key=key)
                except OSError as exc:
                    log.warning("lexical index not saved (%s); it is rebuilt at the next start", exc)
        columns = {
            "collection": np.array([c.collection for c in chunks], dtype=str),
            "audience": np.array([c.audience for c in chunks], dtype=str),
            "deleted": np.array([c.deleted for c in chunks], dtype=bool),
            "repealed": np.array([c.status == REPEALED for c in chunks], dtype=bool),
            "effective": np.array([c.effective_date for c in chunks], dtype=str),
        }
        doc_freq = Counter(lexical.doc_freq())
        vectors, has_vector = self._load_vectors(chunks, key)
        # Everything is built before anything is swapped: a search running meanwhile sees the old snapshot
        # (or, for an instant, a mix of two — both consistent in length, since the chunks go last).
        subordinate = subordinate_documents(list(dict.fromkeys(c.doc for c in chunks)))
        self.lexical, self.doc_freq, self._columns, self._masks = lexical, doc_freq, columns, {}
        self.vectors, self.has_vector, self.subordinate = vectors, has_vector, subordinate
        self.position = {c.chunk_id: i for i, c in enumerate(chunks)}
        self.chunks = chunks

    def _load_vectors(self, chunks: Sequence[Chunk], key: str) -> tuple[np.ndarray | None, np.ndarray]:
        has_vector = np.zeros(len(chunks), dtype=bool)
        if self.dense is None or not self.mirror_vectors or not chunks:
            return None, has_vector
        mirror = self.vectors_dir / f"{self.dense.name}.{key[:20]}.npy"
        try:
            matrix = np.load(mirror, mmap_mode="r")
            if matrix.shape[0] == len(chunks):
                return matrix, np.ones(len(chunks), dtype=bool)
        except (OSError, ValueError):
            pass  # not saved yet for these chunks: read the vectors from Chroma once
        # After an ingest, the rows of unchanged chunks come from the snapshot in memory; Chroma is asked only
        # for the new and changed ones (reading all 200k vectors from Chroma takes minutes).
        kept: dict[int, int] = {}
        if self.vectors is not None:
            for i, chunk in enumerate(chunks):
                old = self.position.get(chunk.chunk_id)
                if old is not None and self.has_vector[old] and self.chunks[old].content_hash == chunk.content_hash:
                    kept[i] = old
        try:
            stored = self.dense.vectors([c.chunk_id for i, c in enumerate(chunks) if i not in kept])
        except RetrievalUnavailable as exc:
            log.warning("dense vectors not loaded, searching Chroma per query: %s", exc)
            return None, has_vector
        if not stored and not kept:
            log.warning("no dense vectors for %d chunks: run `regbot ingest` to embed them", len(chunks))
            return None, has_vector
        dim = len(next(iter(stored.values()))) if stored else self.vectors.shape[1]  # type: ignore[union-attr]
        matrix = np.zeros((len(chunks), dim), dtype=np.float32)
        if kept:
            rows = np.fromiter(kept.keys(), dtype=np.int64, count=len(kept))
            matrix[rows] = self.vectors[np.fromiter(kept.values(), dtype=np.int64, count=len(kept))]  # type: ignore[index]
            has_vector[rows] = True
        fresh = np.zeros(len(chunks), dtype=bool)
        for i, chunk in enumerate(chunks):
            vector = stored.get(chunk.chunk_id)
            if vector is not None and len(vector) == dim:
                matrix[i] = vector
                has_vector[i] = fresh[i] = True
        norms = np.linalg.norm(matrix[fresh], axis=1, keepdims=True)
        matrix[fresh] /= np.where(norms > 0, norms, 1.0)
        missing = len(chunks) - int(has_vector.sum())
        if missing:
            log.warning("%d chunks have no dense vector yet; they are found by lexical search only", missing)
        else:
            self._save_mirror(mirror, matrix)  # only complete: a later ingest cannot add vectors to the same key
        return matrix, has_vector

    def _save_mirror(self, path: Path, matrix: np.ndarray) -> None:
        """Write the vector matrix beside the index, replacing older ones of the same dense collection."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            with tmp.open("wb") as handle:
                np.save(handle, matrix)
            tmp.replace(path)
            for old in path.parent.glob(f"{self.dense.name}.*.npy" if self.dense else ""):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("dense vectors not saved (%s); they are read from Chroma at the next start", exc)

    def dense_search(self, vector: Sequence[float], k: int, mask: np.ndarray) -> list[tuple[int, float]]:
        """(position, cosine) best first over the mirrored vectors, only where `mask` allows."""
        if self.vectors is None:
            return []
        # einsum runs on this thread: BLAS's gemv wakes its thread pool, which on a busy 2-core host cost 20-40 ms
        # at 3k chunks (p95) and doubled the time at 200k (measured: benchmarks/scale.py).
        scores = np.einsum("ij,j->i", self.vectors, np.asarray(vector, dtype=np.float32))
        allowed = mask & self.has_vector
        scores = np.where(allowed, scores, -np.inf)
        k = min(k, int(allowed.sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(i), float(scores[i])) for i in top]

    def _tokens(self, chunks: Sequence[Chunk], stored: Sequence[Sequence[str]]
                ) -> tuple[list[list[str]], list[list[str]]]:
        bodies: list[list[str]] = []
        titles: list[list[str]] = []
        stale: list[int] = []
        for i, tokens in enumerate(stored):
            split = split_stored_tokens(tokens)
            if split is None:
                stale.append(i)
                bodies.append([])
                titles.append([])
            else:
                bodies.append(split[0])
                titles.append(split[1])
        if stale:
            log.warning("%d chunks were tokenised by an older tokenizer; re-tokenising them now "
                        "(run `regbot ingest` again to store the new tokens)", len(stale))
            fresh = lexical_tokens(self.tokenizer, [chunks[i] for i in stale])
            for i, tokens in zip(stale, fresh, strict=True):
                bodies[i], titles[i] = split_stored_tokens(tokens) or ([], [])
        return bodies, titles

    @staticmethod
    def _index_key(chunks: Sequence[Chunk]) -> str:
        digest = hashlib.sha1(TITLE_MARKER.encode())
        for chunk in chunks:
            digest.update(f"{chunk.chunk_id}:{chunk.content_hash}:{chunk.title}\n".encode())
        return digest.hexdigest()

    def idf(self, token: str) -> float:
        """Inverse document frequency; a token the corpus never uses gets the highest weight."""
        total = max(len(self.chunks), 1)
        return math.log(1 + (total - self.doc_freq.get(token, 0) + 0.5) / (self.doc_freq.get(token, 0) + 0.5))

    def get(self, chunk_id: str) -> Chunk | None:
        position = self.position.get(chunk_id)
        return self.chunks[position] if position is not None else None

    def mask(self, scope: Scope, *, include_deleted: bool = False, include_repealed: bool = False,
             effective_on: str = "") -> np.ndarray:
        """Which chunks a scope may see: its collections and audience; 삭제 and 폐지 excluded unless asked;
        with `effective_on` (YYYY-MM-DD), only text already in force on that date."""
        key = (scope.collections, scope.audience, include_deleted, include_repealed, effective_on)
        cached = self._masks.get(key)
        if cached is not None and len(cached) == len(self.chunks):
            return cached
        columns = self._columns
        mask = np.ones(len(self.chunks), dtype=bool)
        if not len(mask):
            return mask
        if scope.collections:
            mask &= np.isin(columns["collection"], list(scope.collections))
        if not include_deleted:
            mask &= ~columns["deleted"]
        if not include_repealed:
            mask &= ~columns["repealed"]
        if scope.audience:
            mask &= (columns["audience"] == "") | (columns["audience"] == scope.audience)
        if effective_on:
            dates = columns["effective"]
            mask &= (dates == "") | (dates <= effective_on)
        if len(self._masks) > 64:
            self._masks.clear()
        self._masks[key] = mask
        return mask

    def documents(self, scope: Scope | None = None) -> list[str]:
        """Document names in corpus order, unique."""
        allowed = set(scope.collections) if scope else set()
        seen: dict[str, None] = {}
        for c in self.chunks:
            if not allowed or c.collection in allowed:
                seen.setdefault(c.doc, None)
        return list(seen)

    def of_document(self, doc: str, scope: Scope | None = None) -> list[Chunk]:
        allowed = set(scope.collections) if scope else set()
        return [c for c in self.chunks if c.doc == doc and (not allowed or c.collection in allowed)]
