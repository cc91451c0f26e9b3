"""Lexical index: BM25 (bm25s) over Kiwi tokens, rebuilt in memory from the tokens the chunk store keeps."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

# bm25s logs every index build at DEBUG through its own handler.
logging.getLogger("bm25s").setLevel(logging.WARNING)


class LexicalIndex:
    """BM25 over pre-tokenised chunks; `search` can be limited to a subset by a boolean mask."""

    def __init__(self, chunk_ids: Sequence[str], tokens: Sequence[Sequence[str]], *, k1: float = 1.2,
                 b: float = 0.75) -> None:
        import bm25s

        self.chunk_ids = list(chunk_ids)
        self.retriever = bm25s.BM25(k1=k1, b=b)
        if self.chunk_ids:
            # bm25s needs at least one token per document.
            self.retriever.index([list(t) or ["∅"] for t in tokens], show_progress=False)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        if not self.chunk_ids or not query_tokens:
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return self.retriever.get_scores(list(query_tokens))

    def search(self, query_tokens: Sequence[str], k: int, *, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(position, score) best first, only positive scores."""
        scores = self.scores(query_tokens)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        if not len(scores):
            return []
        top = np.argsort(-scores)[:k]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
