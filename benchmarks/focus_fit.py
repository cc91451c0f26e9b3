"""Fit when a follow-up has moved on from the article the previous reply cited, and how far that article falls.

`rag/retrieval/focus.py`: a folded follow-up's own words are ranked alone; when they score the cited article under
`cited_focus_share` of their best, the cited article's prior becomes `cited_focus_factor`. Measured on cached
rankings (`ranking_fit.py features`, today's other ranking values), on two groups weighing alike:

  - follow-ups: the pooled items with earlier turns that the folder folds (the cache of the pooled sets);
  - standalone questions in a conversation: the answerable single-turn items, each asked after the set's previous
    one (`--after-unrelated`), those the folder folds: for them the cited article is the unrelated earlier one.

Objective: MRR@10 per group, the mean of the two. The pair is chosen by 5-fold cross-validation stratified by group
and set; the held-out folds' figures are reported, and the pair is kept only when cross-validation beats the neutral
factor (1.0) by `ranking_fit.KEEP_MARGIN`.

    python benchmarks/focus_fit.py --cache POOL.pkl --after AFTER.pkl [--write [--apply]]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import pickle
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from ranking_fit import KEEP_MARGIN, PARAMETERS, K, Pool  # noqa: E402

from benchmarks.folds import stratified_folds  # noqa: E402
from rag.retrieval.components import PRIOR_FLAGS  # noqa: E402
from rag.retrieval.config import RANKING_FIT, RetrievalConfig  # noqa: E402

FACTORS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SHARES = (0.6, 0.7, 0.8, 0.9, 0.95)
CITED = PRIOR_FLAGS.index("cited_article")


def reciprocal_ranks(path: Path) -> tuple[list[dict], dict[tuple[float, float], np.ndarray]]:
    """The folded items of a cache and their reciprocal ranks at every (factor, share) of the grid."""
    records = [r for r in pickle.loads(path.read_bytes()) if r["followup"]]
    defaults = RetrievalConfig()
    pool = Pool(records, defaults.rerank_depth)
    today = {name: float(getattr(defaults, name)) for name in PARAMETERS}
    # The own words alone: no conversation words in the lexical query or the reranker's coverage.
    own = pool.values({**today, "context_weight": 0.0, "rerank_context_weight": 0.0}, slice(None))
    best_own = np.where(np.isfinite(own), own, -np.inf).max(axis=1)
    cited = pool.priors[:, :, CITED]
    cited_own = np.where(cited & np.isfinite(own), own, 0.0).max(axis=1, initial=0.0)
    share = np.where(best_own > 0, cited_own / np.where(best_own > 0, best_own, 1.0), 1.0)
    out = {}
    for factor, limit in itertools.product(FACTORS, SHARES):
        moved_on = cited.any(axis=1) & (best_own > 0) & (share < limit)
        ranks = pool.ranks(today, factor=np.where(cited & moved_on[:, None], factor, 1.0))
        out[(factor, limit)] = np.where((ranks > 0) & (ranks <= K), 1.0 / np.maximum(ranks, 1), 0.0)
    return records, out


def objective(groups: np.ndarray, rr: np.ndarray, rows: np.ndarray) -> float:
    return float(np.mean([rr[rows & (groups == g)].mean() for g in np.unique(groups[rows])]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True, help="ranking_fit features of the pooled sets")
    parser.add_argument("--after", type=Path, required=True, help="the same with --after-unrelated")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help=f"write the fit to {RANKING_FIT} (`focus`)")
    parser.add_argument("--apply", action="store_true", help="with --write: make the pair the defaults (after "
                                                            "checking the whole pipeline: benchmarks/in_thread.py)")
    parser.add_argument("--decision", default="", help="with --write: why it is or is not applied (the pipeline "
                                                       "check's figures)")
    args = parser.parse_args()
    follow, rr_follow = reciprocal_ranks(args.cache)
    after, rr_after = reciprocal_ranks(args.after)
    records = follow + after
    groups = np.array(["follow-up"] * len(follow) + ["standalone in a thread"] * len(after))
    rr = {key: np.concatenate([rr_follow[key], rr_after[key]]) for key in rr_follow}
    sets = [f"{g}/{r['set']}" for g, r in zip(groups, records, strict=True)]
    fold = stratified_folds(sets, args.folds)
    everything = np.ones(len(records), dtype=bool)
    neutral = (1.0, SHARES[0])

    def choose(rows: np.ndarray) -> tuple[float, float]:  # ties keep the neutral factor, then the larger share
        return max(rr, key=lambda key: (round(objective(groups, rr[key], rows), 9), key[0] == 1.0, key[1]))

    held = np.zeros(len(records))
    chosen = []
    for f in range(args.folds):
        key = choose(fold != f)
        chosen.append(key)
        held[fold == f] = rr[key][fold == f]
    cv, before = objective(groups, held, everything), objective(groups, rr[neutral], everything)
    final = choose(everything) if cv > before + KEEP_MARGIN else neutral
    by_set: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        by_set[s].append(i)
    report = {
        "items": {str(g): int((groups == g).sum()) for g in np.unique(groups)},
        "chosen_per_fold": [list(k) for k in chosen],
        "objective": {"neutral": round(before, 4), "held_out": round(cv, 4)},
        "held_out_mrr@10": {str(g): round(float(held[groups == g].mean()), 4) for g in np.unique(groups)},
        "neutral_mrr@10": {str(g): round(float(rr[neutral][groups == g].mean()), 4) for g in np.unique(groups)},
        "held_out_by_set": {s: [round(float(rr[neutral][v].mean()), 3), round(float(held[v].mean()), 3), len(v)]
                            for s, v in sorted(by_set.items())},
        "values": {"cited_focus_factor": final[0], "cited_focus_share": final[1]},
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.write:
        data = yaml.safe_load(RANKING_FIT.read_text(encoding="utf-8"))
        if args.apply:
            data["values"].update(report["values"])
        data["focus"] = {
            "fitted": dt.date.today().isoformat(),
            "method": f"benchmarks/focus_fit.py: {args.folds}-fold cross-validation stratified by group and set, "
                      "objective MRR@10 of folded follow-ups and of folded standalone questions asked after an "
                      "unrelated exchange, weighing alike",
            "applied": bool(args.apply),
            "decision": args.decision,
            **{k: v for k, v in report.items() if k != "held_out_by_set"},
        }
        header = "".join(line + "\n" for line in RANKING_FIT.read_text(encoding="utf-8").splitlines()
                         if line.startswith("#"))
        RANKING_FIT.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=115),
                               encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
