"""Fit when a question borrows the conversation's subject: the most topic nouns it may name and still be folded.

The offline folder (`rag/retrieval/query.py`, `ConversationFolder`) folds the previous exchange into a question
that points back (a "그럼"-opener, a pointer word, a bare condition) or names at most `topic_nouns` topic nouns.
Folding helps a follow-up ("쌍둥이면 더 길어져?" after an answer on maternity leave) and costs a standalone
question asked in the same thread: the previous reply's article words then pull the ranking towards it. Both are
measured on cached rankings (`ranking_fit.py features`, today's ranking values):

  - follow-ups: every pooled item with earlier turns, folded (`--fold always`) and not (`--fold never`);
  - standalone questions in a conversation: every answerable single-turn item asked after the set's previous one
    (`--after-unrelated`, the earlier reply quoting that item's evidence), folded and not.

The objective is MRR@10 with the two groups weighing alike; the threshold is chosen by 5-fold cross-validation
stratified by group and set, and the held-out folds' figures are reported.

    REGBOT_DATA_DIR=... python benchmarks/ranking_fit.py features FILES --cache A.pkl --fold always   (and never,
        and both again with --after-unrelated)
    python benchmarks/fold_fit.py --always A.pkl --never N.pkl --after-always AA.pkl --after-never AN.pkl [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
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

from ranking_fit import PARAMETERS, K, Pool  # noqa: E402

from benchmarks.folds import stratified_folds  # noqa: E402
from rag.retrieval.config import RetrievalConfig  # noqa: E402
from rag.retrieval.query import FOLD_FIT, load_fold_fit  # noqa: E402

GRID = range(0, 7)


def reciprocal_ranks(path: Path) -> tuple[list[dict], np.ndarray]:
    records = pickle.loads(path.read_bytes())
    defaults = RetrievalConfig()
    ranks = Pool(records, defaults.rerank_depth).ranks({n: float(getattr(defaults, n)) for n in PARAMETERS})
    return records, np.where((ranks > 0) & (ranks <= K), 1.0 / np.maximum(ranks, 1), 0.0)


def items(folded: Path, alone: Path, group: str) -> list[dict]:
    """Per item: its group, set, what the decision reads, and its reciprocal rank folded and not."""
    with_history, rr_folded = reciprocal_ranks(folded)
    without, rr_alone = reciprocal_ranks(alone)
    assert [r["id"] for r in with_history] == [r["id"] for r in without], "caches of different items"
    return [{"group": group, "set": r["set"], "points_back": r["points_back"], "topic_nouns": r["topic_nouns"],
             "folded": float(rr_folded[i]), "alone": float(rr_alone[i])}
            for i, r in enumerate(with_history) if r["history"]]


def scores(pool: list[dict], limit: int) -> dict[str, float]:
    """MRR@10 per group when questions pointing back or naming at most `limit` topic nouns are folded."""
    by_group: dict[str, list[float]] = defaultdict(list)
    for item in pool:
        fold = item["points_back"] or item["topic_nouns"] <= limit
        by_group[item["group"]].append(item["folded"] if fold else item["alone"])
    out = {g: float(np.mean(v)) for g, v in sorted(by_group.items())}
    out["objective"] = float(np.mean(list(out.values())))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("always", "never", "after-always", "after-never"):
        parser.add_argument(f"--{name}", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help=f"write the fitted threshold to {FOLD_FIT} as a candidate")
    parser.add_argument("--apply", action="store_true", help="with --write: make it the threshold the folder reads")
    args = parser.parse_args()
    pool = items(args.always, args.never, "follow-up") + \
        items(args.after_always, args.after_never, "standalone in a conversation")
    fold = stratified_folds([(p["group"], p["set"]) for p in pool], args.folds)
    chosen = []
    held: dict[str, list[float]] = defaultdict(list)
    for f in range(args.folds):
        train = [p for p, k in zip(pool, fold, strict=True) if k != f]
        # Ties go to the smaller threshold: fold less when it does not help.
        best = max(GRID, key=lambda t: (round(scores(train, t)["objective"], 6), -t))
        chosen.append(best)
        for p in (p for p, k in zip(pool, fold, strict=True) if k == f):
            folded = p["points_back"] or p["topic_nouns"] <= best
            held[p["group"]].append(p["folded"] if folded else p["alone"])
    held_figures = {g: round(float(np.mean(v)), 4) for g, v in sorted(held.items())}
    held_figures["objective"] = round(float(np.mean(list(held_figures.values()))), 4)
    today = load_fold_fit()
    final = max(GRID, key=lambda t: (round(scores(pool, t)["objective"], 6), -t))
    by_set = {}
    for name in sorted({p["set"] for p in pool if p["group"] == "follow-up"}):
        members = [p for p in pool if p["set"] == name and p["group"] == "follow-up"]
        by_set[name] = {"items": len(members), "today": round(scores(members, today)["follow-up"], 4),
                        "fitted": round(scores(members, final)["follow-up"], 4)}
    report = {
        "items": {g: sum(1 for p in pool if p["group"] == g) for g in sorted({p["group"] for p in pool})},
        "grid": {t: {k: round(v, 4) for k, v in scores(pool, t).items()} for t in GRID},
        "today": {"topic_nouns": today, **{k: round(v, 4) for k, v in scores(pool, today).items()}},
        "cross_validation": {"folds": args.folds, "chosen_per_fold": chosen, "held_out": held_figures},
        "fitted": final, "follow_ups_by_set_mrr@10": by_set,
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.write:
        sets = sorted({p["set"] for p in pool})
        # Written as the candidate; `topic_nouns` (what the folder reads) moves only with --apply, after the whole
        # pipeline's out-of-scope refusals in a thread were checked (a fold must not lower them).
        existing = yaml.safe_load(FOLD_FIT.read_text(encoding="utf-8")) if FOLD_FIT.exists() else {}
        data = {
            "topic_nouns": final if args.apply else existing.get("topic_nouns", today),
            "candidate": final,
            "decision": existing.get("decision", ""),
            "fitted": dt.date.today().isoformat(),
            "method": "the threshold of ConversationFolder chosen by 5-fold cross-validation stratified by group and "
                      "set, objective MRR@10 of follow-ups and of standalone questions asked after an unrelated "
                      "exchange, weighing alike (benchmarks/fold_fit.py)",
            "sets": sets,
            "items": report["items"],
            "today_before": report["today"],
            "cross_validation": report["cross_validation"],
            "follow_ups_by_set_mrr@10": by_set,
        }
        header = "# When a question borrows the conversation's subject: see benchmarks/fold_fit.py.\n"
        FOLD_FIT.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=115),
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
