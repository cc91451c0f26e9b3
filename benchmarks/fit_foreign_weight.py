"""The dense weight of English and Vietnamese questions (`foreign_dense_weight`), fitted with k-fold cross-validation.

A foreign question's lexical side reads only the glossary's Korean words, while multilingual e5 reads the question
as asked; the fusion weighs them. Every pooled foreign item (the foreign tuning sets) is run through the offline
pipeline once per grid value (only the fusion's weight changes; cheap). Then k folds stratified by set: on each,
the value with the best MRR@10 over the other folds' answerable items (ties: the smaller Hit@5 loss, then the value
in use) scores the held-out fold. The held-out figures, pooled and per set, are compared with the value in use;
`--write` stores the fit in rag/data/foreign_fit.yaml, applied only when held out it beats the value in use.

The lexical weight needs no fit of its own: only the ratio of the two weights orders the fused candidates, and the
foreign answerability rule answers whatever the glossary reads (the judge's top score moves, its outcome does not).

    REGBOT_DATA_DIR=… REGBOT_LLM=offline .venv/bin/python benchmarks/fit_foreign_weight.py [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

SETS = ("foreign-dev", "heldout-foreign-1", "heldout-foreign-2", "heldout-foreign-3")
GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0)
FIT_FILE = REPO / "rag" / "data" / "foreign_fit.yaml"
KEY = "foreign_dense_weight"


async def record(grid: tuple[float, ...]) -> tuple[list[tuple[str, str, bool]], dict[float, list[tuple]]]:
    """(set, language, answerable) per item, and per grid value each item's (hit5, mrr, refused)."""
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import Evaluator, load_eval_file
    from rag.lang.detect import detect_language

    components = build_components(Settings(REGBOT_LLM="offline"))
    pipeline = components.pipeline
    pipeline.stages.cache = None
    fusion = components.retriever.fusion
    names = components.lookup.names()
    evaluator = Evaluator(pipeline, same_doc=lambda gold, doc: (names.resolve(gold).doc or gold).replace(" ", "")
                          == doc.replace(" ", ""))
    items = [(name, item) for name in SETS for item in load_eval_file(REPO / "eval" / f"{name}.jsonl")]
    meta = [(name, detect_language(next(t.content for t in item.turns if t.role.value == "user")), bool(item.gold))
            for name, item in items]
    base = fusion.config
    rows: dict[float, list[tuple]] = {}
    for value in grid:
        fusion.config = base.model_copy(update={KEY: value})
        rows[value] = []
        for _, item in items:
            row = await evaluator.run_item(item)
            rows[value].append((float(row["hit5"]), row["mrr"], bool(row["refused"])))
        print(json.dumps({KEY: value, **summary(rows[value], meta, range(len(items)))}), file=sys.stderr, flush=True)
    fusion.config = base
    return meta, rows


def summary(rows: list[tuple], meta: list[tuple], chosen) -> dict:
    """Hit@5, MRR@10 and the share refused over the answerable items of `chosen`; out of scope refused (count)."""
    answerable = [i for i in chosen if meta[i][2]]
    out_of_scope = [i for i in chosen if not meta[i][2]]
    n = len(answerable) or 1
    return {"answerable": len(answerable),
            "hit@5": round(sum(rows[i][0] for i in answerable) / n, 4),
            "mrr@10": round(sum(rows[i][1] for i in answerable) / n, 4),
            "answerable_refused": round(sum(rows[i][2] for i in answerable) / n, 4),
            "no_gold_refused": sum(rows[i][2] for i in out_of_scope)}


def folds_of(meta: list[tuple], k: int, seed: int) -> list[int]:
    """Each item's fold: per set, its items shuffled (seeded) and dealt round the folds."""
    fold = [0] * len(meta)
    rng = random.Random(seed)
    for name in SETS:
        members = [i for i, m in enumerate(meta) if m[0] == name]
        rng.shuffle(members)
        for position, index in enumerate(members):
            fold[index] = position % k
    return fold


def cross_validate(meta: list[tuple], rows: dict[float, list[tuple]], current: float, k: int, seed: int) -> dict:
    fold = folds_of(meta, k, seed)
    held: list[tuple | None] = [None] * len(meta)
    chosen = []
    for f in range(k):
        train = [i for i in range(len(meta)) if fold[i] != f and meta[i][2]]

        def objective(value: float, train: list[int] = train) -> tuple:
            r = rows[value]
            return (round(sum(r[i][1] for i in train), 9), round(sum(r[i][0] for i in train), 9), value == current)

        best = max(rows, key=objective)
        chosen.append(best)
        for i in range(len(meta)):
            if fold[i] == f:
                held[i] = rows[best][i]
    everyone = range(len(meta))
    by_set = {name: {"fitted": summary(held, meta, [i for i in everyone if meta[i][0] == name]),
                     "current": summary(rows[current], meta, [i for i in everyone if meta[i][0] == name])}
              for name in SETS}
    by_language = {lang: {"fitted": summary(held, meta, [i for i in everyone if meta[i][1] == lang]),
                          "current": summary(rows[current], meta, [i for i in everyone if meta[i][1] == lang])}
                   for lang in ("en", "vi")}
    return {"chosen_per_fold": chosen, "held_out": summary(held, meta, everyone),
            "current": summary(rows[current], meta, everyone), "by_set": by_set, "by_language": by_language}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="per-item rows: read when it exists, else written")
    parser.add_argument("--write", action="store_true", help=f"store the fit in {FIT_FILE.name}")
    args = parser.parse_args(argv)
    from rag.retrieval.config import RetrievalConfig

    current = RetrievalConfig().foreign_dense_weight
    grid = tuple(sorted({*GRID, current}))
    if args.cache and args.cache.exists():
        data = json.loads(args.cache.read_text(encoding="utf-8"))
        meta, rows = [tuple(m) for m in data["meta"]], {float(v): r for v, r in data["rows"].items()}
    else:
        meta, rows = asyncio.run(record(grid))
        if args.cache:
            args.cache.write_text(json.dumps({"meta": meta, "rows": rows}), encoding="utf-8")
    cv = cross_validate(meta, rows, current, args.folds, args.seed)
    everyone = range(len(meta))
    full = max(rows, key=lambda v: (round(sum(r[1] for r, m in zip(rows[v], meta, strict=True) if m[2]), 9),
                                    round(sum(r[0] for r, m in zip(rows[v], meta, strict=True) if m[2]), 9),
                                    v == current))
    held, now = cv["held_out"], cv["current"]
    better = (held["mrr@10"], held["hit@5"], -held["answerable_refused"]) > \
        (now["mrr@10"], now["hit@5"], -now["answerable_refused"])
    report = {"grid": {str(v): summary(rows[v], meta, everyone) for v in rows}, "fit_on_all": full,
              "applied": better, **cv}
    print(json.dumps(report, indent=1))
    if args.write:
        write(report, meta, full if better else current, args)
    return 0


def write(report: dict, meta: list[tuple], value: float, args: argparse.Namespace) -> None:
    held, now = report["held_out"], report["current"]
    sets = {name: sum(1 for m in meta if m[0] == name) for name in SETS}
    verdict = "Applied" if report["applied"] else "Kept" if report["fit_on_all"] == value else "Not applied"
    decision = (f"{verdict}: {KEY} {report['fit_on_all']} fitted on "
                f"every item; {args.folds}-fold CV stratified by set (seed {args.seed}), held-out folds "
                f"(values chosen per fold {report['chosen_per_fold']}): Hit@5 {now['hit@5']} -> {held['hit@5']}, "
                f"MRR@10 {now['mrr@10']} -> {held['mrr@10']}, answerable refused {now['answerable_refused']} -> "
                f"{held['answerable_refused']} against the value in use. Per set, held out: "
                + "; ".join(f"{name} MRR@10 {v['current']['mrr@10']} -> {v['fitted']['mrr@10']}"
                            for name, v in report["by_set"].items())
                + ". No separate lexical weight: only the ratio of the two orders the candidates.")
    data = {"fitted": datetime.date.today().isoformat(),
            "method": f"grid {sorted(float(v) for v in report['grid'])} of the fusion's weight for English and "
                      "Vietnamese questions, objective MRR@10 over the answerable items "
                      "(benchmarks/fit_foreign_weight.py)",
            "sets": {f"{name}.jsonl": count for name, count in sets.items()}, "items": len(meta),
            "decision": decision, "values": {KEY: value}}
    header = ("# The fusion's dense weight for English and Vietnamese questions: `values` are RetrievalConfig's "
              "defaults,\n# fitted by benchmarks/fit_foreign_weight.py with its cross-validation.\n")
    FIT_FILE.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=118),
                        encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
