"""Weighted reciprocal-rank fusion of ranked lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def weighted_rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], *, k: int = 60
                 ) -> list[tuple[str, float, dict[str, int]]]:
    """Fuse ranked id lists: score = Σ weight / (k + rank). Returns (id, score, {retriever: rank}) best first.

    A retriever with weight 0 still reports its ranks but cannot move the order.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ids in rankings.items():
        weight = weights.get(name, 1.0)
        for rank, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            ranks.setdefault(item, {})[name] = rank
    ordered = sorted(scores, key=lambda i: -scores[i])
    return [(i, scores[i], ranks[i]) for i in ordered]
