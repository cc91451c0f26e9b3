"""Quality gates on the real corpus with the real embedder: `regbot eval` on ../shared/eval must not fall below the
floors in floors.yaml (set a little under the figures measured there; raise them as the work lands), and the
annual-leave figure a user would read first must be the statute's.

A user-visible change to ko-law (근로기준법 제60조 ① giving 14일 instead of 15일) fails this file: the eval's keyword
figures drop and the annual-leave answer quotes the wrong figure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rag.pipeline import collect
from testkit import EVAL_DIR, REPO_ROOT

FLOORS = yaml.safe_load((Path(__file__).with_name("floors.yaml")).read_text(encoding="utf-8"))
EVAL_SETS = sorted(FLOORS["sets"])

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def eval_metrics(kolaw_data_dir, tmp_path_factory) -> dict[str, dict]:
    """`regbot eval <set> --json` for every set, as a user runs it (the CLI in child processes, this worktree's
    sources), both sets at once, each on its own copy of the index: each is mostly one thread of the two cores."""
    copies = {name: shutil.copytree(kolaw_data_dir, tmp_path_factory.mktemp("eval") / "data") for name in EVAL_SETS}
    runs = {name: subprocess.Popen([sys.executable, "-m", "bot.cli", "--data-dir", str(copies[name]), "eval",
                                    str(EVAL_DIR / name), "--json"], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env={**os.environ, "REGBOT_LLM": "offline"})
            for name in EVAL_SETS}
    metrics = {}
    for name, run in runs.items():
        out, err = run.communicate(timeout=900)
        assert run.returncode == 0, err[-2000:]
        metrics[name] = json.loads(out)["metrics"]
    return metrics


@pytest.mark.parametrize("name", EVAL_SETS)
def test_eval_figures_stay_within_their_floors(name, eval_metrics):
    metrics = eval_metrics[name]
    failing = {}
    for metric, bound in FLOORS["sets"][name].items():
        value = metrics[metric]
        if "floor" in bound and (value is None or value < bound["floor"]):
            failing[metric] = f"{value} < floor {bound['floor']} (measured {bound['measured']})"
        if "ceiling" in bound and (value is None or value > bound["ceiling"]):
            failing[metric] = f"{value} > ceiling {bound['ceiling']} (measured {bound['measured']})"
    assert failing == {}, f"regbot eval {name}: {failing}"


# --- the annual-leave figure -----------------------------------------------------------------------------------

# Our own wordings of the commonest question there is (none is an eval item): a year in, how many days of leave.
ANNUAL_LEAVE = ["회사 다닌 지 1년 됐는데 연차휴가는 며칠 줘야 해?", "일 년 꽉 채워 다녔으면 유급휴가 며칠이야?",
                "1년 근무하면 연차 며칠 생겨?"]
SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def first_sentence(text: str) -> str:
    return SENTENCE_END.split(text.strip(), maxsplit=1)[0]


@pytest.fixture(scope="module")
async def annual_leave_answers(kolaw_components):
    return {question: (await collect(kolaw_components.pipeline, question))[0] for question in ANNUAL_LEAVE}


@pytest.mark.parametrize("question", ANNUAL_LEAVE)
def test_the_annual_leave_answer_quotes_the_statutes_figure(annual_leave_answers, question):
    answer = annual_leave_answers[question]
    quotes = [c.quote for c in answer.citations if (c.doc, c.article) == ("근로기준법", "제60조")]
    assert quotes, [c.label for c in answer.citations]
    assert any("15일" in quote for quote in quotes), quotes


@pytest.mark.parametrize("question", ANNUAL_LEAVE)
def test_the_annual_leave_answer_leads_with_article_60_and_says_15_days_first(annual_leave_answers, question):
    answer = annual_leave_answers[question]
    first = answer.citations[0]
    assert (first.doc, first.article) == ("근로기준법", "제60조"), first.label
    assert "15일" in first_sentence(answer.text), answer.text[:300]
