"""`regbot eval FILE`: score an eval file through the pipeline and print the metrics (a table, or JSON)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.common import console, out, positive_int, require_index
from bot.config import Settings

if TYPE_CHECKING:
    from rich.table import Table


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="eval file: one JSON object a line (docs/eval.md)")
    p.add_argument("-k", type=positive_int, default=10, metavar="N", help="hits scored per item (default: %(default)s)")
    p.add_argument("--json", action="store_true", help='print {"metrics", "by_type", "items"} as JSON')


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from rag.eval import Evaluator, dumps, load_eval_file

    items = load_eval_file(Path(args.file))
    require_index(settings, args)
    components = args.build(settings)
    names = components.lookup.names()

    def same_doc(gold: str, doc: str) -> bool:
        resolved = names.resolve(gold)
        return (resolved.doc or gold).replace(" ", "") == doc.replace(" ", "")

    evaluator = Evaluator(components.pipeline, same_doc=same_doc, k=args.k)
    with Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), console=console, transient=True) as bar:
        task = bar.add_task("eval", total=len(items))
        result = asyncio.run(evaluator.run(items, progress=lambda n: bar.update(task, completed=n)))
    if args.json:
        print(dumps(result))
        return 0
    out.print(eval_table(result, title=f"regbot eval {args.file}"))
    metrics = result["metrics"]
    out.print(" · ".join(f"{label} {_figure(metrics.get(key))}" for key, label in EVAL_HEADLINE))
    return 0


# The figures a reader looks for first (DESIGN.md §3 "Eval figures").
EVAL_HEADLINE = (("refusal_rate_out_of_scope", "out-of-scope refused"),
                 ("false_refusal_rate_answerable", "answerable refused"),
                 ("hedged_rate_answerable", "answerable hedged"),
                 ("hedged_rate_out_of_scope", "out-of-scope hedged"),
                 ("no_retrieval_rate_chitchat", "small talk without retrieval"),
                 ("keyword_coverage_first_200", "keywords in first 200 chars"))


def _figure(value) -> str:
    return "–" if value is None else str(value)


def eval_table(result: dict, *, title: str) -> Table:
    """Metrics as rows and item types as columns ("all" first), so the table stays narrow as metrics are added."""
    from rich.table import Table

    columns = [("all", result["metrics"]), *result["by_type"].items()]
    table = Table(title=title)
    # A narrow terminal wraps names onto a second line instead of cutting them (two metrics share their first 16
    # characters): metrics are shown with spaces for their JSON key's underscores; figures ("0.6667") never wrap.
    table.add_column("metric", overflow="fold")
    for name, _ in columns:
        table.add_column(name.replace("_", " "), justify="right", min_width=6, overflow="fold")
    for metric in result["metrics"]:
        values = [values.get(metric) for _, values in columns]
        if all(v is None for v in values):
            continue
        table.add_row(metric.replace("_", " "), *["" if v is None else str(v) for v in values])
    return table
