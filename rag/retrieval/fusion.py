"""Fusion of ranked lists: weighted reciprocal-rank fusion, and a score-aware convex combination.

RRF looks at ranks only, so a weak retriever's confident-looking top ranks count as much as the strong one's.
The convex combination reads each retriever's scores, normalised over its own candidates, so an item the
stronger retriever scores far above the rest keeps its lead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


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


def protect_confident(fused: Sequence[tuple[str, float, dict[str, int]]], lexical: Sequence[tuple[str, float]], *,
                      depth: int, ratio: float, eligible: Callable[[str], bool] | None = None
                      ) -> list[tuple[str, float, dict[str, int]]]:
    """Keep the lexical retriever's confident candidates within the fused top `depth`.

    A candidate lexical ranks within `depth` whose score is at least `ratio` of lexical's best is "confident";
    one that fusion pushed below position `depth` takes the place of the lowest non-confident candidate there.
    Scores are rewritten to keep the list sorted. Where lexical is sure, the weaker retriever can reorder its
    picks but not push them out. `eligible` limits which candidates may be protected.
    """
    if depth <= 0 or not lexical or not fused:
        return list(fused)
    best = lexical[0][1]
    if best <= 0:
        return list(fused)
    confident = [item for item, score in lexical[:depth]
                 if score >= ratio * best and (eligible is None or eligible(item))]
    order = [row[0] for row in fused]
    head = order[:depth]
    missing = [item for item in confident if item not in head]
    if not missing:
        return list(fused)
    by_id = {row[0]: row for row in fused}
    # Make room: drop the lowest non-confident items of the head.
    keep = list(head)
    for item in reversed(head):
        if len(keep) + len(missing) <= depth:
            break
        if item not in confident:
            keep.remove(item)
    new_head = keep + [m for m in missing if m in by_id]
    new_head.sort(key=lambda item: order.index(item) if item in head else depth)  # keep fused order, newcomers last
    rest = [item for item in order if item not in new_head]
    reordered = new_head + rest
    scores = [by_id[i][1] for i in order]  # the same descending scores, re-assigned by position
    return [(item, scores[n], by_id[item][2]) for n, item in enumerate(reordered)]
