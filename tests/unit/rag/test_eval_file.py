"""The eval file format as docs/eval.md teaches it: its examples load, and bad lines are named by line number."""

from __future__ import annotations

import re

import pytest

from rag.errors import EvalFileError
from rag.eval import load_eval_file
from testkit import REPO_ROOT


def documented_examples() -> str:
    text = (REPO_ROOT / "docs" / "eval.md").read_text(encoding="utf-8")
    return re.search(r"```jsonl\n(.*?)```", text, re.S).group(1)


def test_the_examples_in_docs_eval_md_load(tmp_path):
    path = tmp_path / "examples.jsonl"
    path.write_text(documented_examples(), encoding="utf-8")
    items = load_eval_file(path)
    assert [i.type for i in items] == ["colloquial", "keyword", "followup", "structural", "chitchat", "out_of_scope"]
    followup = next(i for i in items if i.type == "followup")
    assert followup.turns[-1].content == "그럼 돈은 언제 들어와?"
    assert followup.gold[0].doc == "여비 규정"


@pytest.mark.parametrize(("content", "problem"), [
    ('{"id": "a", "type": "keyword"}\n', "1: missing field 'turns'"),
    ('\n\n[1, 2]\n', "3: expected a JSON object, got list"),
    ('{"id": "a", "type": "keyword", "turns": [], "gold": [{"article": "제1조"}]}\n', "1: missing field 'gold.0.doc'"),
])
def test_a_bad_line_is_named_with_its_number_and_problem(tmp_path, content, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EvalFileError) as error:
        load_eval_file(path)
    assert str(error.value) == f"{path}:{problem}"


def test_a_folder_is_not_an_eval_file(tmp_path):
    with pytest.raises(EvalFileError, match="is a folder"):
        load_eval_file(tmp_path)
