"""Questions asked in a thread: what the whole offline pipeline does with a question after an unrelated exchange.

A question asked after an earlier exchange may be folded with it (`ConversationFolder`), and everything after the
fold sees the folded question. This measures what that costs and gives, end to end (`regbot eval --json`):

  oos in thread       every out-of-scope single-turn item asked after the set's previous exchange (the previous
                      answerable single-turn item's question, then a reply quoting its evidence and citing its
                      first gold article, as `ranking_fit.after_unrelated_items` builds it; a set without
                      evidence quotes the answer keywords): refusal rate
  answerable in thread
                      every answerable single-turn item asked the same way: false refusals and hedges
  follow-ups          the sets' own multi-turn items (FOLLOWUP_SETS), as written: refusals, hedges, Hit@5, MRR@10

The generated eval files go to a temporary folder (never into eval/); each is run with the CLI on a copy of the
index, as the eval runner does.

    REGBOT_DATA_DIR=... python benchmarks/in_thread.py [--out DIR] [--sets dev heldout-12 ...] [--followups ...]

It prints the pooled figures of both groups and each generated set's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.fit_answerability import SHARED  # noqa: E402
from rag.eval import EvalItem, load_eval_file  # noqa: E402
from rag.models import Message, Role  # noqa: E402

THREAD_SETS = ["dev", "heldout-12", "heldout-13", "heldout-14", "heldout-15", "heldout-16", "chatty-dev"]
FOLLOWUP_SETS = ["followup-real", "heldout-13", "heldout-14", "heldout-15", "heldout-16", "dev"]


def eval_path(name: str, folders: list[Path]) -> Path:
    for folder in folders:
        if (folder / f"{name}.jsonl").is_file():
            return folder / f"{name}.jsonl"
    raise FileNotFoundError(f"no eval set {name}")


def previous_reply(before: EvalItem) -> str:
    """The bot-style reply to `before`: its evidence quoted (its answer keywords, for a set without evidence), its
    first gold article cited, as `ranking_fit.after_unrelated_items` writes it."""
    cited = f"{before.gold[0].doc} {before.gold[0].article}".strip()
    quoted = before.evidence or " ".join(k.split("|")[0] for k in before.answer_keywords)
    return f"{cited}에 따르면 {quoted}\n\n근거 조문: [1] {cited}"


def in_thread(items: list[EvalItem]) -> list[EvalItem]:
    """Each out-of-scope and each answerable single-turn item asked after the set's previous answerable
    single-turn item (its question, then `previous_reply`); types kept, ids marked."""
    out, before = [], None
    for item in items:
        if len(item.turns) != 1 or not (item.gold or item.type == "out_of_scope"):
            continue
        if before is not None:
            turns = [before.turns[0], Message(role=Role.ASSISTANT, content=previous_reply(before)), item.turns[0]]
            out.append(item.model_copy(update={"id": f"{item.id}+after", "turns": turns}))
        if item.gold:
            before = item
    return out


def write_sets(folder: Path, thread_sets: list[str], followup_sets: list[str],
               sources: tuple[Path, ...] = (SHARED, REPO / "eval")) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for name in thread_sets:
        items = load_eval_file(eval_path(name, list(sources)))
        generated = in_thread(items)
        files[f"{name}+thread"] = _write(folder / f"{name}+thread.jsonl", generated)
    for name in followup_sets:
        items = [i for i in load_eval_file(eval_path(name, list(sources))) if len(i.turns) > 1]
        files[f"{name}+followups"] = _write(folder / f"{name}+followups.jsonl", items)
    return files


def _write(path: Path, items: list[EvalItem]) -> Path:
    path.write_text("".join(json.dumps(i.model_dump(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return path


def run_eval(path: Path, data_dir: Path, out: Path) -> dict:
    env = {**os.environ, "REGBOT_LLM": "offline", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "--data-dir", str(data_dir), "eval", str(path), "--json"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"eval of {path.name} failed: {done.stderr.strip().splitlines()[-1:]}")
    out.write_text(done.stdout, encoding="utf-8")
    return json.loads(done.stdout)


def figures(result: dict) -> dict:
    """Counts behind the rates: out of scope refused / hedged, answerable refused / hedged, gold ranks."""
    metrics, oos = result["metrics"], result["by_type"].get("out_of_scope", {})
    n_oos, n_gold = oos.get("items", 0), metrics["items_with_gold"]

    def count(rate: float | None, n: int) -> int:
        return round((rate or 0.0) * n)

    return {"oos": n_oos, "oos_refused": count(oos.get("refusal_rate_out_of_scope"), n_oos),
            "oos_hedged": count(oos.get("hedged_rate_out_of_scope"), n_oos),
            "answerable": n_gold, "answerable_refused": count(metrics["false_refusal_rate_answerable"], n_gold),
            "answerable_hedged": count(metrics["hedged_rate_answerable"], n_gold),
            "hit5": count(metrics["hit@5"], n_gold), "mrr_sum": (metrics["mrr@10"] or 0.0) * n_gold}


def rates(counts: dict) -> dict:
    def share(part: float, whole: int) -> float | None:
        return round(part / whole, 3) if whole else None

    return {"oos_refused": share(counts["oos_refused"], counts["oos"]),
            "oos_hedged": share(counts["oos_hedged"], counts["oos"]),
            "answerable_refused": share(counts["answerable_refused"], counts["answerable"]),
            "answerable_hedged": share(counts["answerable_hedged"], counts["answerable"]),
            "hit@5": share(counts["hit5"], counts["answerable"]),
            "mrr@10": share(counts["mrr_sum"], counts["answerable"]),
            "oos": counts["oos"], "answerable": counts["answerable"]}


def pooled(per_set: dict[str, dict], suffix: str) -> dict:
    total: dict[str, float] = {}
    for name, counts in per_set.items():
        if name.endswith(suffix):
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
    return rates(total) if total else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("REGBOT_DATA_DIR"))
    parser.add_argument("--out", type=Path, help="where the generated sets and the eval outputs go (default: temp)")
    parser.add_argument("--sets", nargs="*", default=THREAD_SETS, help="sets whose single-turn items are asked in a "
                                                                      "thread")
    parser.add_argument("--followups", nargs="*", default=FOLLOWUP_SETS, help="sets whose follow-ups are run")
    parser.add_argument("--eval-dir", type=Path, action="append", help="where the sets are (default: the shared "
                                                                       "sets, then eval/)")
    args = parser.parse_args()
    if args.data_dir is None:
        print("no index: pass --data-dir or set REGBOT_DATA_DIR", file=sys.stderr)
        return 1
    out = args.out or Path(tempfile.mkdtemp(prefix="in-thread."))
    out.mkdir(parents=True, exist_ok=True)
    files = write_sets(out, args.sets, args.followups, tuple(args.eval_dir or (SHARED, REPO / "eval")))
    per_set: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="in-thread-index.") as scratch:
        index = Path(scratch) / "index"
        shutil.copytree(args.data_dir, index)  # the eval stores answers in its data dir: never the shared index
        for name, path in files.items():
            per_set[name] = figures(run_eval(path, index, out / f"{name}.json"))
            print(f"{name}: {json.dumps(rates(per_set[name]))}", file=sys.stderr)
    report = {"out": str(out), "oos_and_answerable_in_thread": pooled(per_set, "+thread"),
              "follow_ups": pooled(per_set, "+followups"), "by_set": {n: rates(c) for n, c in per_set.items()}}
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
