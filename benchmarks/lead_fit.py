"""Fit the offline answer's lead weights on pooled eval sets with k-fold cross-validation.

Two steps, so fitting never re-runs the pipeline:

  record  runs every item of the given sets through the offline pipeline once (as `regbot eval` does) and keeps,
          for each answer the extractive generator wrote, the lead candidates it considered
          (`rag/stages/generator/lead.py`: each sentence's base score and what it states of what is asked) under
          every `max_lead_chars` of the grid, with what the pipeline put around the draft (a hedge's opening, the
          notes after it). Items it did not write (refused, small talk, lookups) keep their answer as it is;
  fit     coordinate ascent over the lead's `StageTuning` values, each value set replayed with the generator's
          own `choose_leads` and `compose`; objective: the mean share of an item's `answer_keywords` found in the
          answer's first 200 characters (`keyword_coverage_first_200`). `--folds` folds, stratified by set: each
          fold is scored with the values fitted on the others, and those held-out figures are the ones reported.
          A weight whose neutral value (1) does about as well in cross-validation (within `KEEP_MARGIN`) is set
          neutral. With `--write` the values fitted on all items are written with their provenance to
          `rag/data/lead_fit.yaml`, and applied (the defaults `StageTuning` reads) only when the held-out figure
          beats today's values.

    .venv/bin/python benchmarks/lead_fit.py record FILE.jsonl... --data-dir IDX --cache /tmp/lead.pkl
    .venv/bin/python benchmarks/lead_fit.py fit --cache /tmp/lead.pkl [--write]

The lead choice moves neither retrieval nor the outcome: only the answer's text.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import pickle
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("REGBOT_LLM", "offline")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from benchmarks.folds import stratified_folds  # noqa: E402
from rag.eval import LEAD_CHARS, keyword_coverage  # noqa: E402
from rag.stages.config import HAND_SET, LEAD_FIT, StageTuning  # noqa: E402
from rag.stages.generator.extractive import compose  # noqa: E402
from rag.stages.generator.lead import choose_leads, lead_candidates  # noqa: E402

# Fitted value → (grid, neutral value or None: a threshold, not a weight that can be switched off).
PARAMETERS: dict[str, tuple[tuple[float, ...], float | None]] = {
    "lead_figure_weight": ((0.7, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0), 1.0),
    "lead_definition_weight": ((0.7, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0), 1.0),
    "lead_limit_weight": ((0.7, 1.0, 1.3, 1.5, 2.0, 3.0, 5.0), 1.0),
    "lead_sanction_weight": ((0.7, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0), 1.0),
    "lead_list_weight": ((0.7, 1.0, 1.3, 1.5, 2.0, 3.0, 5.0, 8.0), 1.0),
    "lead_position_decay": ((0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75), None),
    "lead_order_decay": ((0.0, 0.03, 0.06, 0.1, 0.3), None),
    "lead_free_chars": ((40, 80, 120, 160, 220), None),
    "second_lead_share": ((0.0, 0.2, 0.35, 0.5, 0.75, 1.0, 100.0), None),
    "lead_sentences": ((1, 2), None),
    "max_lead_chars": ((120, 160, 220, 280, 360), None),
    "figure_lead_depth": ((3, 4, 6, 8, 10), None),
}
# Not fitted: the condition weights (a sentence stating the condition a question sets, "1년 지나면" → not "1년 미만")
# moved no item of the pool (cross-validation with them neutral tied, 2026-11-29); they stay as set, their
# behaviour held by the generator's tests, until a pool has items that measure them.
INTEGER = {"lead_sentences", "max_lead_chars", "figure_lead_depth", "lead_free_chars"}
DEPTH = max(PARAMETERS["figure_lead_depth"][0])
# A weight stays only when cross-validation without it is worse by more than this (mean first-200 coverage):
# about one keyword of one item in the pool.
KEEP_MARGIN = 0.001


# --- record -----------------------------------------------------------------------------------------------------

def record(data_dir: Path, files: list[Path]) -> list[dict]:
    """One record per item with gold and answer keywords: its answer, and the lead candidates when it was written
    by the extractive generator."""
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import Evaluator, load_eval_file

    settings = Settings(REGBOT_DATA_DIR=str(data_dir), REGBOT_LLM="offline")
    components = build_components(settings)
    names = components.lookup.names()

    def same_doc(gold: str, doc: str) -> bool:
        resolved = names.resolve(gold)
        return (resolved.doc or gold).replace(" ", "") == doc.replace(" ", "")

    evaluator = Evaluator(components.pipeline, same_doc=same_doc)
    generator = components.pipeline.stages.generator
    tuning = generator.tuning
    seen: list[dict] = []

    def observe(gen, request, parts, studied) -> None:
        seen.append({"request": request, "parts": tuple(parts), "studied": [
            {"question": q, "terms": terms, "ranked": ranked, "facets": facets,
             "candidates": {chars: lead_candidates(gen.tokenizer, terms, ranked, facets, max_chars=chars, depth=DEPTH)
                            for chars in PARAMETERS["max_lead_chars"][0]}}
            for q, terms, ranked, facets in studied]})

    generator.observer = observe
    records = []
    for path in files:
        for item in load_eval_file(path):
            if not item.gold or not item.answer_keywords:
                continue
            seen.clear()
            row = asyncio.run(evaluator.run_item(item))
            text = row["item"]["answer"]
            rec = {"id": item.id, "set": path.name, "type": item.type, "keywords": list(item.answer_keywords),
                   "fixed": keyword_coverage(text[:LEAD_CHARS], item.answer_keywords), "parts": None}
            if seen:
                drafted = seen[-1]
                written = _render(drafted, tuning, None).rstrip()
                at = text.find(written) if written else -1
                if at >= 0:
                    rec.update(parts=drafted, prefix=text[:at], suffix=text[at + len(written):])
            records.append(rec)
        log(f"{path.name}: {sum(r['set'] == path.name for r in records)} items")
    generator.observer = None
    return records


def _render(drafted: dict, tuning: StageTuning, memo: dict | None) -> str:
    """The draft's text with the lead `tuning` chooses."""
    parts, studied = drafted["parts"], drafted["studied"]
    at_most = tuning.lead_sentences if len(parts) == 1 else 1
    leads = choose_leads([(part["candidates"][tuning.max_lead_chars], part["terms"], part["facets"])
                          for part in studied], tuning, at_most)
    key = [tuple(id(c) for c in chosen) for chosen in leads]
    answered = [(part["question"], part["ranked"], [(c.shown, c.hit, c.marker, c.text) for c in chosen])
                for part, chosen in zip(studied, leads, strict=True)]
    if memo is not None and tuple(key) in memo:
        return memo[tuple(key)]
    text = compose(drafted["request"], parts, answered, tuning).text
    if memo is not None:
        memo[tuple(key)] = text
    return text


# --- fit --------------------------------------------------------------------------------------------------------

class Pool:
    """The recorded items, scored under a set of values (each distinct lead's coverage is computed once)."""

    def __init__(self, records: list[dict]) -> None:
        self.records = records
        self.memo: list[dict] = [{} for _ in records]

    def coverage(self, values: dict[str, float], rows: np.ndarray) -> np.ndarray:
        tuning = StageTuning(**{k: int(v) if k in INTEGER else v for k, v in values.items()})
        out = np.zeros(len(rows))
        for n, i in enumerate(rows):
            r = self.records[i]
            if r["parts"] is None:
                out[n] = r["fixed"]
                continue
            text = r["prefix"] + _render(r["parts"], tuning, self.memo[i]).rstrip() + r["suffix"]
            out[n] = keyword_coverage(text[:LEAD_CHARS], r["keywords"])
        return out


def fit(pool: Pool, rows: np.ndarray, start: dict[str, float], *, fixed: dict[str, float],
        passes: int = 2) -> dict[str, float]:
    """Coordinate ascent over each value's grid; ties keep the current value."""
    values = {**start, **fixed}
    best = pool.coverage(values, rows).mean()
    for _ in range(passes):
        moved = False
        for name, (grid, _) in PARAMETERS.items():
            if name in fixed:
                continue
            for value in grid:
                trial = {**values, name: value}
                score = pool.coverage(trial, rows).mean()
                if score > best + 1e-9:
                    best, values, moved = score, trial, True
        if not moved:
            break
    return values


def folds_of(records: list[dict], folds: int, seed: int = 29) -> np.ndarray:
    """Fold number per item, stratified by set."""
    return stratified_folds([r["set"] for r in records], folds, seed)


def cross_validate(pool: Pool, fold: np.ndarray, start: dict[str, float], *,
                   fixed: dict[str, float] | None = None) -> np.ndarray:
    """Held-out coverage: each fold scored with the values fitted on the other folds."""
    out = np.zeros(len(pool.records))
    for f in range(int(fold.max()) + 1):
        train, test = np.where(fold != f)[0], np.where(fold == f)[0]
        values = fit(pool, train, start, fixed=fixed or {})
        out[test] = pool.coverage(values, test)
    return out


def breakdown(pool: Pool, coverage: np.ndarray) -> dict:
    sets: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(pool.records):
        sets[r["set"]].append(i)
    return {"mean": round(float(coverage.mean()), 4),
            "set_mean": round(float(np.mean([coverage[v].mean() for v in sets.values()])), 4),
            "by_set": {s: round(float(coverage[v].mean()), 4) for s, v in sorted(sets.items())}}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("files", nargs="+", type=Path)
    rec.add_argument("--data-dir", type=Path, default=Path(os.environ.get("REGBOT_DATA_DIR", ".regbot")))
    rec.add_argument("--cache", type=Path, required=True)
    fitp = sub.add_parser("fit")
    fitp.add_argument("--cache", type=Path, required=True)
    fitp.add_argument("--folds", type=int, default=5)
    fitp.add_argument("--write", action="store_true", help=f"write the fit with its provenance to {LEAD_FIT}")
    fitp.add_argument("--today", choices=("defaults", "hand-set"), default="defaults",
                      help="the values to beat: StageTuning's defaults (the fit in effect) or the hand-set values")
    args = parser.parse_args()
    if args.command == "record":
        records = record(args.data_dir, args.files)
        args.cache.write_bytes(pickle.dumps(records))
        return 0
    records = pickle.loads(args.cache.read_bytes())
    pool = Pool(records)
    sizes: dict[str, int] = defaultdict(int)
    for r in records:
        sizes[r["set"]] += 1
    defaults = StageTuning()
    current = {name: float(HAND_SET[name] if args.today == "hand-set" else getattr(defaults, name))
               for name in PARAMETERS}
    everything = np.arange(len(records))
    fold = folds_of(records, args.folds)
    report: dict = {"items": len(records), "replayed": sum(r["parts"] is not None for r in records),
                    "sets": dict(sizes), "folds": args.folds,
                    "current": breakdown(pool, pool.coverage(current, everything))}
    cv = cross_validate(pool, fold, current)
    report["cv_held_out"] = breakdown(pool, cv)
    log(f"first-200 coverage, current: {report['current']['mean']}  cv held-out: {report['cv_held_out']['mean']}")
    # A weight earns its place when cross-validation with it beats cross-validation with it neutral.
    dropped: dict[str, float] = {}
    ablation = {}
    for name, (_, neutral) in PARAMETERS.items():
        if neutral is None:
            continue
        without = cross_validate(pool, fold, current, fixed={**dropped, name: neutral})
        score = round(float(without.mean()), 4)
        ablation[name] = score
        if score >= report["cv_held_out"]["mean"] - KEEP_MARGIN:
            dropped[name] = neutral
            log(f"  {name}: neutral does as well in CV ({score}): neutral")
        else:
            log(f"  {name}: neutral in CV {score}: kept")
    if dropped:
        report["cv_held_out"] = breakdown(pool, cross_validate(pool, fold, current, fixed=dropped))
    report["cv_with_neutral"] = ablation
    final = fit(pool, everything, current, fixed=dropped)
    final = {k: int(v) if k in INTEGER else float(v) for k, v in final.items()}
    report["fitted_in_sample"] = breakdown(pool, pool.coverage(final, everything))
    report["values"] = final
    report["neutral"] = sorted(dropped)
    applied = report["cv_held_out"]["mean"] > report["current"]["mean"]
    log(f"final cv held-out: {report['cv_held_out']['mean']}  in-sample: {report['fitted_in_sample']['mean']}"
        f"  ({'beats' if applied else 'does not beat'} today's {report['current']['mean']})")
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.write:
        existing = yaml.safe_load(LEAD_FIT.read_text(encoding="utf-8")) if LEAD_FIT.exists() else {}
        held = report["cv_held_out"]
        data = {
            "fitted": dt.date.today().isoformat(),
            "method": f"coordinate ascent over the lead's values replayed on recorded candidates, {args.folds}-fold "
                      "cross-validation stratified by set, objective mean share of answer keywords in the first "
                      "200 characters (benchmarks/lead_fit.py)",
            "sets": {name: n for name, n in sorted(sizes.items())},
            "items": len(records),
            "decision": (f"applied: held-out {held['mean']} beats today's values {report['current']['mean']}"
                         if applied else f"not applied: held-out {held['mean']} does not beat today's "
                                         f"{report['current']['mean']}"),
            "values": final if applied else existing.get("values", {}),
            "cross_validation": {
                "today_in_sample": report["current"]["mean"],
                "held_out": held["mean"],
                "fitted_in_sample": report["fitted_in_sample"]["mean"],
                "today_by_set": report["current"]["by_set"],
                "held_out_by_set": held["by_set"],
                "held_out_with_each_weight_neutral": ablation,
                "neutral": sorted(dropped),
            },
        }
        header = ("# The offline answer's lead: `values` are StageTuning's defaults, fitted by benchmarks/lead_fit.py "
                  "with their\n# cross-validation; applied only when the held-out figure beats the values before.\n")
        LEAD_FIT.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=115),
                            encoding="utf-8")
        log(f"wrote {LEAD_FIT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
