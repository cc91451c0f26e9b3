"""Cross-validation folds stratified by a key (the eval set, say), shared by the fitting scripts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

import numpy as np


def stratified_folds(strata: Sequence[Hashable], folds: int, seed: int = 29) -> np.ndarray:
    """Fold number per item: each stratum's items (strata in order of first appearance) shuffled by one seeded
    generator and dealt round the folds, so every fold holds about the same share of every stratum."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(strata), dtype=int)
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, stratum in enumerate(strata):
        members[stratum].append(i)
    for indices in members.values():
        fold[rng.permutation(indices)] = np.arange(len(indices)) % folds
    return fold
