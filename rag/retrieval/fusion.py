"""Fusion of ranked lists: weighted reciprocal-rank fusion, and a score-aware convex combination.

RRF looks at ranks only, so a weak retriever's confident-looking top ranks count as much as the strong one's.
The convex combination reads each retriever's scores, normalised over its own candidates, so an item the
stronger retriever scores far above the rest keeps its lead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag.models import Hit


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


def normalized_scores(scored: Sequence[tuple[str, float]], *, floor: float | None = None) -> dict[str, float]:
    """Min-max normalise one retriever's (id, score) list to 0..1; `floor` is the score that maps to 0
    (default: the lowest score in the list, so its last candidate gets 0)."""
    if not scored:
        return {}
    top = max(s for _, s in scored)
    low = min(s for _, s in scored) if floor is None else floor
    span = top - low
    if span <= 1e-9:
        return {item: 1.0 for item, _ in scored}
    return {item: max(0.0, (score - low) / span) for item, score in scored}


def distribution_scores(scored: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Distribution-based normalisation: (score − (μ − 3σ)) / 6σ over the list, clipped to 0..1. A retriever
    whose top scores are bunched (dense cosines) gets little spread; one with a clear winner keeps its lead."""
    if not scored:
        return {}
    values = [s for _, s in scored]
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if std <= 1e-9:
        return {item: 1.0 for item, _ in scored}
    low = mean - 3 * std
    return {item: min(1.0, max(0.0, (score - low) / (6 * std))) for item, score in scored}


def convex_fusion(scored: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float], *,
                  floors: Mapping[str, float] | None = None, methods: Mapping[str, str] | None = None
                  ) -> list[tuple[str, float, dict[str, int]]]:
    """score = Σ weight × normalised score; each retriever's `methods` entry is "minmax" (default, with an
    optional floor) or "distribution". Returns (id, score, {retriever: rank}) best first."""
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, items in scored.items():
        weight = weights.get(name, 1.0)
        if (methods or {}).get(name) == "distribution":
            normal = distribution_scores(items)
        else:
            normal = normalized_scores(items, floor=(floors or {}).get(name))
        for rank, (item, _) in enumerate(items, start=1):
            fused[item] = fused.get(item, 0.0) + weight * normal[item]
            ranks.setdefault(item, {})[name] = rank
    ordered = sorted(fused, key=lambda i: -fused[i])
    return [(i, fused[i], ranks[i]) for i in ordered]


def merge_planned_hits(per_query: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """Merge the rankings of a turn's planned queries: round-robin by rank, so no sub-question is crowded out by
    another's long tail; an article already taken (by any query) does not take a second slot until every list
    is exhausted, then the remaining parts follow in the same order."""
    merged: list[Hit] = []
    later: list[Hit] = []
    chunk_ids: set[str] = set()
    articles: set[tuple[str, str, str]] = set()
    depth = max((len(hits) for hits in per_query), default=0)
    for rank in range(depth):
        for hits in per_query:
            if rank >= len(hits) or hits[rank].chunk.chunk_id in chunk_ids:
                continue
            hit = hits[rank]
            chunk_ids.add(hit.chunk.chunk_id)
            key = (hit.chunk.collection, hit.chunk.doc, hit.chunk.article)
            if hit.chunk.article and key in articles:
                later.append(hit)
            else:
                articles.add(key)
                merged.append(hit)
    return (merged + later)[:limit]
