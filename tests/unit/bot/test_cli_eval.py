"""`regbot eval`: the --json contract (DESIGN.md §3) and the table with the refusal figures, on the samples."""

import json

import pytest

from bot.cli import cli

EVAL_LINES = [
    {"id": "q1", "type": "colloquial", "turns": [{"role": "user", "content": "입사 1년 지나면 연차 며칠 받아?"}],
     "gold": [{"doc": "취업규칙", "article": "제20조"}], "answer_keywords": ["15일"]},
    {"id": "o1", "type": "out_of_scope", "turns": [{"role": "user", "content": "사내 카페는 저녁 몇 시에 문을 닫아?"}]},
    {"id": "c1", "type": "chitchat", "turns": [{"role": "user", "content": "안녕! 만나서 반가워"}]},
]


@pytest.fixture
def eval_file(tmp_path, sample_components, monkeypatch):
    path = tmp_path / "mini.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in EVAL_LINES), encoding="utf-8")
    monkeypatch.setenv("REGBOT_DATA_DIR", str(sample_components.settings.data_dir))
    return path


def run_eval(argv: list[str], components) -> int:
    return cli.main(argv, build_components=lambda settings: components)


def test_json_has_the_design_keys_and_the_refusal_figures(eval_file, sample_components, capsys):
    assert run_eval(["eval", str(eval_file), "--json"], sample_components) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"metrics", "by_type", "items"}
    metrics = result["metrics"]
    for key in ("hit@1", "hit@5", "mrr@10", "keyword_coverage", "keyword_coverage_first_200",
                "refusal_rate_out_of_scope", "false_refusal_rate_answerable", "no_retrieval_rate_chitchat"):
        assert key in metrics
    assert (metrics["refusal_rate_out_of_scope"], metrics["no_retrieval_rate_chitchat"]) == (1.0, 1.0)
    assert metrics["false_refusal_rate_answerable"] == 0.0
    by_id = {i["id"]: i for i in result["items"]}
    assert by_id["c1"]["route"] == "chitchat" and by_id["c1"]["retrieved"] == []
    assert by_id["o1"]["citations"] == [] and by_id["o1"]["refused"]
    assert {"doc", "article", "chapter"} == set(by_id["q1"]["retrieved"][0])


def test_the_table_names_each_type_and_the_refusal_rates(eval_file, sample_components, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "160")
    assert run_eval(["eval", str(eval_file)], sample_components) == 0
    printed = capsys.readouterr().out
    for text in ("out of scope", "chitchat", "false refusal rate answerable", "keyword coverage first 200",
                 "out-of-scope refused 1.0"):
        assert text in printed


@pytest.mark.parametrize("columns", ["100", "80"])
def test_a_narrow_terminal_wraps_the_table_instead_of_cutting_names(eval_file, sample_components, monkeypatch,
                                                                     capsys, columns):
    monkeypatch.setenv("COLUMNS", columns)
    assert run_eval(["eval", str(eval_file)], sample_components) == 0
    printed = capsys.readouterr().out
    assert "…" not in printed
    assert max(len(line) for line in printed.splitlines()) <= int(columns)
    cells = " ".join(cell.strip() for line in printed.splitlines() for cell in line.split("│")[1:2])
    assert "first 200" in cells and "answerable" in cells
