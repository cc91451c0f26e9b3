"""Refusal / false-refusal trade-off of the offline answerability decision, so an operator can pick a threshold.

Each eval item runs once through the real pipeline (understand → retrieve → grade → rewrite → retrieve → grade),
with a grader that records `AnswerabilityJudge`'s features at both gradings and always fails, so the second
retrieval happens for every question and nothing is generated. Every threshold is then decided from the recorded
scores (a turn's outcome is the best of its gradings), so the table costs one pass of retrieval, not one per row.

  refusal         share of `out_of_scope` items refused (higher is better)
  false_refusal   share of answerable items (those with gold) refused (lower is better); lookups and small talk
                  are never graded, so they count as answered
  hedged_*        at the configured answer threshold, the share quoted as the closest article (between the row's
                  threshold, read as the hedge threshold, and the answer threshold)

The blend and its two thresholds are fitted with cross-validation by `benchmarks/fit_answerability.py`; this table
shows what moving the refusal line would do.

    REGBOT_DATA_DIR=... .venv/bin/python benchmarks/refusal.py [--eval FILE ...] [--json]

Several `--eval` files are pooled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from rag.stages.answerability import AnswerabilityFit, AnswerabilityJudge  # noqa: E402
from rag.stages.contracts import GradeResult  # noqa: E402

SHARED = REPO.parent / "shared"
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
MAX_FALSE_REFUSAL = 0.05  # the target a threshold is chosen for: at most 5 % of answerable questions refused


class RecordingGrader:
    """Grades with the judge, records what it saw, and always fails (so the rewrite round runs too)."""

    def __init__(self, judge: AnswerabilityJudge) -> None:
        self.judge = judge
        self.seen: list[dict[str, float | None]] = []

    async def run(self, question: str, hits: list[Hit], *, parts: int = 1, asked: str = "") -> GradeResult:
        assessed = self.judge.assess(question, hits, parts=parts, asked=asked)
        self.seen.append(assessed.features)
        return GradeResult(passed=False, score=100 * assessed.score, missing=assessed.missing,
                           looked_for=assessed.looked_for)


@dataclass
class Row:
    id: str
    type: str
    answerable: bool  # has gold
    graded: list[dict[str, float | None]] = field(default_factory=list)  # features per grading (empty: never graded)


async def record(items: list[EvalItem], components) -> list[Row]:
    pipeline = components.pipeline
    grader = RecordingGrader(pipeline.stages.grader.judge)
    pipeline.stages.grader = grader
    pipeline.stages.cache = None
    rows = []
    for item in items:
        grader.seen = []
        await collect(pipeline, item.turns[-1].content, history=tuple(item.turns[:-1]), turn_id=item.id)
        rows.append(Row(id=item.id, type=item.type, answerable=bool(item.gold), graded=list(grader.seen)))
    return rows


def best_score(row: Row, fit: AnswerabilityFit) -> float | None:
    """The turn's score: the best of its gradings (None: never graded)."""
    return max((fit.score(g) for g in row.graded), default=None)


def rates(rows: list[Row], fit: AnswerabilityFit, threshold: float, answer_at: float) -> dict[str, float | int | None]:
    oos = [r for r in rows if r.type == "out_of_scope"]
    answerable = [r for r in rows if r.answerable]

    def share(group: list[Row], low: float, high: float) -> tuple[float | None, int]:
        hits = sum(1 for r in group if (s := best_score(r, fit)) is not None and low <= s < high)
        return (round(hits / len(group), 4) if group else None), hits

    refusal, refused_oos = share(oos, -1.0, threshold)
    false_refusal, refused_answerable = share(answerable, -1.0, threshold)
    return {
        "threshold": threshold,
        "refusal": refusal,
        "false_refusal": false_refusal,
        "hedged_out_of_scope": share(oos, threshold, answer_at)[0],
        "hedged_answerable": share(answerable, threshold, answer_at)[0],
        "refused_out_of_scope": refused_oos,
        "refused_answerable": refused_answerable,
    }


def table(rows: list[Row], fit: AnswerabilityFit, answer_at: float) -> list[dict[str, float | int | None]]:
    return [rates(rows, fit, t, max(t, answer_at)) for t in THRESHOLDS]


def choose(trade_off: list[dict[str, float | int | None]]) -> dict[str, float | int | None] | None:
    """The threshold with the most refusals whose false-refusal rate stays within the target."""
    allowed = [r for r in trade_off if r["false_refusal"] is not None and r["false_refusal"] <= MAX_FALSE_REFUSAL]
    return max(allowed, key=lambda r: (r["refusal"] or 0.0, -r["threshold"]), default=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", type=Path, action="append", help="eval file (repeat to pool several; default: dev)")
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
    judge = components.pipeline.stages.grader.judge
    fit = judge.fit
    result: dict = {"benchmark": "refusal", "eval": [str(f) for f in files],
                    "answer_threshold": judge.threshold, "hedge_threshold": judge.hedge_threshold,
                    "configured": rates(rows, fit, judge.hedge_threshold, judge.threshold),
                    "trade_off": table(rows, fit, judge.threshold)}
    result["suggested"] = choose(result["trade_off"])
    result["items"] = [{"id": r.id, "type": r.type, "scores": [round(fit.score(g), 4) for g in r.graded],
                        "features": r.graded} for r in rows if r.graded]
    if not args.json:
        print_tables(result)
    print(json.dumps(result, ensure_ascii=False, indent=None if not args.json else 2))
    return 0


def print_tables(result: dict) -> None:
    print(f"answer at {result['answer_threshold']}, hedge at {result['hedge_threshold']}: {result['configured']}",
          file=sys.stderr)
    print(f"{'threshold':>9}  {'refusal (oos)':>13}  {'false refusal':>13}  {'hedged (oos)':>12}  "
          f"{'hedged (ans.)':>13}", file=sys.stderr)
    for row in result["trade_off"]:
        print(f"{row['threshold']:>9.2f}  {row['refusal']!s:>13}  {row['false_refusal']!s:>13}  "
              f"{row['hedged_out_of_scope']!s:>12}  {row['hedged_answerable']!s:>13}", file=sys.stderr)
    print(f"suggested refusal line: {result.get('suggested')}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
