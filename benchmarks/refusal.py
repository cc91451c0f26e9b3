"""Refusal / false-refusal trade-off of the offline answerability decision, so an operator can pick a threshold.

Each eval item runs once through the real pipeline (understand → retrieve → grade → rewrite → retrieve → grade),
with a grader that records `AnswerabilityJudge`'s features at both gradings and always fails, so the second
retrieval happens for every question and nothing is generated. Every threshold is then decided from the recorded
scores (refused when both gradings fall below it), so the table costs one pass of retrieval, not one per row.

  refusal       share of `out_of_scope` items refused (higher is better)
  false_refusal share of answerable items (those with gold) refused (lower is better); lookups and small talk are
                never graded, so they count as answered

`--fit` refits the judge's logistic weights on the recorded first-grading features (what
`AnswerabilityWeights` holds), and `--halves` checks robustness: fit and choose the threshold on one half of the
items (stratified by type), score the other half, and the other way round.

    REGBOT_DATA_DIR=... .venv/bin/python benchmarks/refusal.py [--eval FILE ...] [--fit] [--halves] [--json]

Several `--eval` files are pooled (the weights are fitted on dev and the held-out sets already scored once).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bot.app import build_components  # noqa: E402
from bot.config import Settings  # noqa: E402
from rag.eval import EvalItem, load_eval_file  # noqa: E402
from rag.models import Hit  # noqa: E402
from rag.pipeline import collect  # noqa: E402
from rag.stages.answerability import Answerability, AnswerabilityJudge, AnswerabilityWeights  # noqa: E402
from rag.stages.grader import GradeResult  # noqa: E402

SHARED = REPO.parent / "shared"
FEATURES = ("coverage", "agreement", "document_agreement", "heading", "similarity")
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
MAX_FALSE_REFUSAL = 0.03  # the target a threshold is chosen for: at most 3 % of answerable questions refused


class RecordingGrader:
    """Grades with the judge, records what it saw, and always fails (so the rewrite round runs too)."""

    def __init__(self, judge: AnswerabilityJudge) -> None:
        self.judge = judge
        self.seen: list[Answerability] = []

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1) -> GradeResult:
        assessed = self.judge.assess(question, hits, parts=parts)
        self.seen.append(assessed)
        return GradeResult(passed=False, score=100 * assessed.score, missing=assessed.missing,
                           looked_for=assessed.looked_for)


@dataclass
class Row:
    id: str
    type: str
    answerable: bool  # has gold
    graded: list[dict[str, float]] = field(default_factory=list)  # features per grading (empty: never graded)


async def record(items: list[EvalItem], components) -> list[Row]:
    pipeline = components.pipeline
    grader = RecordingGrader(pipeline.stages.grader.judge)
    pipeline.stages.grader = grader
    pipeline.stages.cache = None
    rows = []
    for item in items:
        grader.seen = []
        await collect(pipeline, item.turns[-1].content, history=tuple(item.turns[:-1]), turn_id=item.id)
        rows.append(Row(id=item.id, type=item.type, answerable=bool(item.gold),
                        graded=[{f: getattr(a, f) for f in FEATURES} for a in grader.seen]))
    return rows


def score(weights: AnswerabilityWeights, features: dict[str, float | None]) -> float:
    return weights.score(**features)


def refused(row: Row, weights: AnswerabilityWeights, threshold: float) -> bool:
    """The pipeline refuses when every grading (first, and after the rewrite) falls below the threshold."""
    return bool(row.graded) and all(score(weights, g) < threshold for g in row.graded)


def rates(rows: list[Row], weights: AnswerabilityWeights, threshold: float) -> dict[str, float | int]:
    oos = [r for r in rows if r.type == "out_of_scope"]
    answerable = [r for r in rows if r.answerable]
    refused_oos = sum(refused(r, weights, threshold) for r in oos)
    refused_answerable = sum(refused(r, weights, threshold) for r in answerable)
    return {
        "threshold": threshold,
        "refusal": round(refused_oos / len(oos), 4) if oos else None,
        "false_refusal": round(refused_answerable / len(answerable), 4) if answerable else None,
        "refused_out_of_scope": refused_oos,
        "refused_answerable": refused_answerable,
    }


def table(rows: list[Row], weights: AnswerabilityWeights) -> list[dict[str, float | int]]:
    return [rates(rows, weights, t) for t in THRESHOLDS]


def choose(trade_off: list[dict[str, float | int]]) -> dict[str, float | int] | None:
    """The threshold with the most refusals whose false-refusal rate stays within the target."""
    allowed = [r for r in trade_off if r["false_refusal"] is not None and r["false_refusal"] <= MAX_FALSE_REFUSAL]
    return max(allowed, key=lambda r: (r["refusal"] or 0.0, -r["threshold"]), default=None)


def _inputs(features: dict[str, float | None], center: float) -> list[float]:
    """The regression's inputs: similarity relative to its center (0 when there is no dense index), as scored."""
    similarity = features.get("similarity")
    return [1.0, *(features[f] for f in FEATURES[:-1]), 0.0 if similarity is None else 10 * (similarity - center)]


def fit(rows: list[Row], *, l2: float = 0.1, steps: int = 5000, rate: float = 0.5) -> AnswerabilityWeights:
    """Logistic regression (gradient descent) of answerable vs out-of-scope on the first grading's features.
    Similarity enters scaled by 10 (its spread is a tenth of the others'), so one step size suits all."""
    center = AnswerabilityWeights().similarity_center
    data = [(r.graded[0], 1.0 if r.answerable else 0.0) for r in rows
            if r.graded and (r.answerable or r.type == "out_of_scope")]
    w = [0.0] * (len(FEATURES) + 1)
    n = max(len(data), 1)
    for _ in range(steps):
        grad = [0.0] * len(w)
        for features, label in data:
            x = _inputs(features, center)
            p = 1.0 / (1.0 + math.exp(-sum(a * b for a, b in zip(w, x, strict=True))))
            for i, xi in enumerate(x):
                grad[i] += (p - label) * xi
        for i in range(len(w)):
            grad[i] = grad[i] / n + (l2 * w[i] / n if i else 0.0)
            w[i] -= rate * grad[i]
    return AnswerabilityWeights(bias=round(w[0], 2), coverage=round(w[1], 2), agreement=round(w[2], 2),
                                document_agreement=round(w[3], 2), heading=round(w[4], 2),
                                similarity=round(10 * w[5], 2))


def halves(rows: list[Row]) -> list[dict]:
    """Fit weights and threshold on one half, score the other half (both ways). The halves are stratified: each
    item type is ordered by a hash of the ids and dealt alternately, so both halves hold out-of-scope items."""
    half: dict[str, int] = {}
    for kind in {r.type for r in rows}:
        ordered = sorted((r.id for r in rows if r.type == kind), key=lambda i: hashlib.sha1(i.encode()).hexdigest())
        half.update({item_id: n % 2 for n, item_id in enumerate(ordered)})

    out = []
    for train in (0, 1):
        fit_rows = [r for r in rows if half[r.id] == train]
        test_rows = [r for r in rows if half[r.id] != train]
        weights = fit(fit_rows)
        chosen = choose(table(fit_rows, weights))
        threshold = chosen["threshold"] if chosen else 0.5
        out.append({"fit_on": f"half {train}", "weights": weights.model_dump(), "threshold": threshold,
                    "fit": rates(fit_rows, weights, threshold), "held_out": rates(test_rows, weights, threshold)})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", type=Path, action="append", help="eval file (repeat to pool several; default: dev)")
    parser.add_argument("--fit", action="store_true", help="refit the logistic weights and show their trade-off")
    parser.add_argument("--halves", action="store_true", help="fit on one half of the items, score the other")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args()
    files = args.eval or [SHARED / "eval" / "dev.jsonl"]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(json.dumps({"benchmark": "refusal", "skipped": f"not found: {', '.join(missing)}"}, ensure_ascii=False))
        return 0
    settings = Settings(REGBOT_LLM="offline")
    components = build_components(settings)
    if not components.corpus.chunks:
        print(f"the index in {settings.data_dir} is empty: run `regbot ingest` first", file=sys.stderr)
        return 1
    rows = asyncio.run(record([item for f in files for item in load_eval_file(f)], components))
    weights = components.pipeline.stages.grader.judge.weights
    result: dict = {"benchmark": "refusal", "eval": [str(f) for f in files], "weights": weights.model_dump(),
                    "configured_threshold": settings.answerable_threshold, "trade_off": table(rows, weights)}
    result["suggested"] = choose(result["trade_off"])
    if args.fit:
        fitted = fit(rows)
        result["fitted"] = {"weights": fitted.model_dump(), "trade_off": table(rows, fitted)}
        result["fitted"]["suggested"] = choose(result["fitted"]["trade_off"])
    if args.halves:
        result["halves"] = halves(rows)
    result["items"] = [{"id": r.id, "type": r.type, "scores": [round(score(weights, g), 4) for g in r.graded],
                        "features": r.graded} for r in rows if r.graded]
    if not args.json:
        print_tables(result)
    print(json.dumps(result, ensure_ascii=False, indent=None if not args.json else 2))
    return 0


def print_tables(result: dict) -> None:
    for name, section in [("configured weights", result), ("fitted weights", result.get("fitted"))]:
        if not section:
            continue
        print(f"{name}: {section.get('weights')}", file=sys.stderr)
        print(f"{'threshold':>9}  {'refusal (oos)':>13}  {'false refusal':>13}", file=sys.stderr)
        for row in section["trade_off"]:
            print(f"{row['threshold']:>9.2f}  {row['refusal']!s:>13}  {row['false_refusal']!s:>13}", file=sys.stderr)
        print(f"suggested: {section.get('suggested')}", file=sys.stderr)
    for check in result.get("halves", []):
        print(f"halves — {check['fit_on']}: threshold {check['threshold']}, fit {check['fit']}, "
              f"held-out {check['held_out']}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
