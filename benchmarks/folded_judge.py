"""How a folded follow-up is best judged: logistic blends over its own words' signals and the folded question's
(`<name>_folded`, which the judge records for every folded question), compared by cross-validation.

The rows are the questions where folding matters: the sets' follow-ups (answerable) and every single-turn question
asked after the set's previous exchange (`benchmarks/in_thread.py`: out of scope, and answerable), recorded with
every question after an exchange folded (`--fold always`, as `ranking_fit.py features` does), so the judge is
compared on whatever a fold threshold folds.

  record   the generated sets through the offline pipeline with `fit_answerability.py`'s recording grader
  compare  CANDIDATES by k-fold cross-validation (`fit_answerability.cross_validate`: stratified by set and
           answerable / out of scope, thresholds chosen on the training folds); held-out figures, overall and for
           the follow-ups alone

On 2026-11-29 (652 rows) every blend that judged the own words refused about .70 of the out-of-scope questions
held out (the folded question: .25), and .15-.20 of the follow-ups (the folded question: .03): pooled, the
standalone questions outnumber the follow-ups, so the fit learns to ignore what the conversation lends. The judge
uses no fitted blend for folded questions; it reads the own words only where they name a subject the evidence
lacks and do not point back (`AnswerabilityJudge.assess`).

    REGBOT_DATA_DIR=... python benchmarks/folded_judge.py record --cache F.jsonl [--fold always|cues]
    python benchmarks/folded_judge.py compare --cache F.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.fit_answerability import cross_validate, load_rows  # noqa: E402
from benchmarks.in_thread import FOLLOWUP_SETS, SHARED, THREAD_SETS, write_sets  # noqa: E402

LEGAL_CORE = ["coverage", "heading", "agreement", "document_agreement", "similarity", "similarity_core"]
CANDIDATES = {
    "the folded question (as before)": [f"{n}_folded" for n in LEGAL_CORE],
    "own words": LEGAL_CORE,
    "own words and the folded question's similarity": [*LEGAL_CORE, "similarity_folded"],
    "own words and the folded question's legal core": [*LEGAL_CORE, *(f"{n}_folded" for n in LEGAL_CORE)],
    "own words, their telling word missing, and the folded question's similarity": [
        *LEGAL_CORE, "missing_top", "similarity_folded"],
}
LEXICAL = ["coverage", "heading", "missing_top", "story"]  # fit_answerability.py's lexical-only set
CANDIDATES.update({
    "lexical: the folded question (as before)": [f"{n}_folded" for n in LEXICAL],
    "lexical: own words": LEXICAL,
    "lexical: own words and the folded question's": [*LEXICAL, *(f"{n}_folded" for n in LEXICAL)],
})


def folded_rows(cache: Path) -> list[dict]:
    """The items with at least one grading of a folded question, those gradings only."""
    rows = load_rows(cache)
    for row in rows:
        row["graded"] = [g for g in row["graded"] if g.get("similarity_folded") is not None
                         and g.get("similarity") is not None]
    return [r for r in rows if r["graded"]]


def compare(cache: Path) -> dict:
    rows = folded_rows(cache)
    out: dict = {"rows": len(rows)}
    for name, names in CANDIDATES.items():
        cv = cross_validate(rows, names)
        followups = [v for k, v in cv["by_set"].items() if k.endswith("+followups")]
        count = sum(v["answerable"] for v in followups)
        out[name] = {**cv["held_out"], "follow_ups_refused": round(
            sum(v["answerable_refused"] * v["answerable"] for v in followups) / count, 4) if count else None}
    return out


def record(cache: Path, fold: str, sources: tuple[Path, ...] = (SHARED, REPO / "eval")) -> int:
    from benchmarks import fit_answerability
    from rag.retrieval.query import ConversationFolder

    if fold == "always":  # every question after an exchange folded: the blend must judge any folded question
        ConversationFolder.leans_on_history = lambda self, question: True  # type: ignore[method-assign]
    folder = Path(tempfile.mkdtemp(prefix="fit-folded."))
    files = write_sets(folder, THREAD_SETS, FOLLOWUP_SETS, sources)
    return asyncio.run(fit_answerability.record(list(files.values()), cache))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["record", "compare"])
    parser.add_argument("--cache", type=Path, required=True, help="the per-item feature file (JSONL)")
    parser.add_argument("--fold", choices=["cues", "always"], default="always",
                        help="record every question after an exchange folded (default), or as the folder decides")
    parser.add_argument("--eval-dir", type=Path, action="append", help="where the sets are (default: the shared "
                                                                       "sets, then eval/)")
    args = parser.parse_args()
    if args.step == "record":
        count = record(args.cache, args.fold, tuple(args.eval_dir or (SHARED, REPO / "eval")))
        print(f"recorded {count} items to {args.cache}", file=sys.stderr)
        return 0
    print(json.dumps(compare(args.cache), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
