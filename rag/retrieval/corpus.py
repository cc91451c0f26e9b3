"""The searchable corpus in memory: chunks from the store, the BM25 index over them, and the dense index."""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np

from rag.knowledge.store import ChunkStore
from rag.models import Chunk, Scope
from rag.retrieval.dense import DenseIndex
from rag.retrieval.lexical import LexicalIndex
from rag.retrieval.tokenizer import Tokenizer

log = logging.getLogger(__name__)


def lexical_tokens(tokenizer: Tokenizer, chunks: Sequence[Chunk]) -> list[list[str]]:
    """Body tokens plus the article title's tokens once more, so a title match outweighs a body mention."""
    bodies = tokenizer.tokens_many([c.text for c in chunks])
    titles = tokenizer.tokens_many([c.title for c in chunks])
    return [body + title for body, title in zip(bodies, titles, strict=True)]


class IndexedCorpus:
    """Snapshot of the chunk store with its lexical index; `refresh` reloads when ingest changed the store."""

    def __init__(self, store: ChunkStore, dense: DenseIndex | None, tokenizer: Tokenizer) -> None:
        self.store = store
        self.dense = dense
        self.tokenizer = tokenizer
        self._lock = threading.Lock()
        self.version = -1
        self.chunks: list[Chunk] = []
        self.position: dict[str, int] = {}
        self.lexical = LexicalIndex([], [])
        self.doc_freq: Counter[str] = Counter()
        self.refresh()

    def refresh(self) -> bool:
        """Reload from the store if it changed; True when it did."""
        version = self.store.version()
        if version == self.version:
            return False
        with self._lock:
            chunks, tokens = self.store.load()
            self.chunks = chunks
            self.position = {c.chunk_id: i for i, c in enumerate(chunks)}
            self.lexical = LexicalIndex([c.chunk_id for c in chunks], tokens)
            self.doc_freq = Counter(t for toks in tokens for t in set(toks))
            self.version = version
        log.info("corpus loaded: %d chunks (version %d)", len(chunks), version)
        return True

    def idf(self, token: str) -> float:
        """Inverse document frequency; a token the corpus never uses gets the highest weight."""
        total = max(len(self.chunks), 1)
        return math.log(1 + (total - self.doc_freq.get(token, 0) + 0.5) / (self.doc_freq.get(token, 0) + 0.5))

    def get(self, chunk_id: str) -> Chunk | None:
        position = self.position.get(chunk_id)
        return self.chunks[position] if position is not None else None

    def mask(self, scope: Scope, *, include_deleted: bool = False, include_repealed: bool = False) -> np.ndarray:
        """Which chunks a scope may see (collections, audience, 삭제 and 폐지 excluded unless asked)."""
        allowed = set(scope.collections)
        return np.array([
            (not allowed or c.collection in allowed)
            and (include_deleted or not c.deleted)
            and (include_repealed or c.status != "폐지")
            and (not scope.audience or not c.audience or c.audience == scope.audience)
            for c in self.chunks
        ], dtype=bool)

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
