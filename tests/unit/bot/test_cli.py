"""The CLI's input errors: one line on stderr, a documented non-zero exit, before anything heavy is built, and no
data dir created by a read command."""

from __future__ import annotations

import json

import pytest

from bot.cli import chat, cli, common
from rag import messages


class NeverBuild:
    """Stands in for the component builder: input errors must be reported before it is called."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, settings):
        self.calls += 1
        raise AssertionError("components were built although the input was bad")


@pytest.fixture
def builder() -> NeverBuild:
    return NeverBuild()


def run(argv: list[str], builder, capsys) -> tuple[int, str, str]:
    code = cli.main(argv, build_components=builder)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    assert lines[0].startswith("regbot: ")
    return lines[0]


def write_index(data_dir, *, chunks: int) -> None:
    import sqlite3

    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "index.sqlite") as db:
        db.execute("CREATE TABLE chunks (chunk_id TEXT)")
        db.executemany("INSERT INTO chunks VALUES (?)", [(str(i),) for i in range(chunks)])


class TestEvalFileErrors:
    def test_missing_eval_file_is_one_line_and_exit_2(self, tmp_path, builder, capsys):
        code, out, err = run(["--data-dir", str(tmp_path), "eval", str(tmp_path / "nope.jsonl")], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err) == f"regbot: {tmp_path / 'nope.jsonl'}: no such file"
        assert out == "" and builder.calls == 0

    def test_bad_json_line_names_its_line_number(self, tmp_path, builder, capsys):
        path = tmp_path / "items.jsonl"
        good = {"id": "q1", "type": "keyword", "turns": [{"role": "user", "content": "연차는 며칠?"}]}
        path.write_text(json.dumps(good, ensure_ascii=False) + "\n\n" + '{"id": "q2", "type": \n', encoding="utf-8")
        code, _, err = run(["eval", str(path)], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err).startswith(f"regbot: {path}:3: not valid JSON")

    def test_item_without_type_names_the_missing_field(self, tmp_path, builder, capsys):
        path = tmp_path / "items.jsonl"
        path.write_text('{"id": "q1", "turns": [{"role": "user", "content": "연차는 며칠?"}]}\n', encoding="utf-8")
        code, _, err = run(["eval", str(path)], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err) == f"regbot: {path}:1: missing field 'type'"

    def test_a_turn_with_an_unknown_role_is_named(self, tmp_path, builder, capsys):
        path = tmp_path / "items.jsonl"
        path.write_text('{"id": "q1", "type": "keyword", "turns": [{"role": "bot", "content": "x"}]}\n',
                        encoding="utf-8")
        code, _, err = run(["eval", str(path)], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err).startswith(f"regbot: {path}:1: field 'turns.0.role'")

    def test_empty_eval_file_is_refused(self, tmp_path, builder, capsys):
        path = tmp_path / "empty.jsonl"
        path.write_text("\n", encoding="utf-8")
        code, _, err = run(["eval", str(path)], builder, capsys)
        assert code == common.EXIT_INPUT
        assert "no eval items" in one_line(err)


class TestMissingIndex:
    @pytest.mark.parametrize("argv", [["ask", "연차는 며칠이야?"], ["search", "연차"], ["chat"]])
    def test_read_command_on_a_missing_index_says_to_ingest_and_creates_nothing(self, tmp_path, builder, capsys,
                                                                                 argv):
        data_dir = tmp_path / "nowhere"
        code, out, err = run(["--data-dir", str(data_dir), *argv], builder, capsys)
        assert code == common.EXIT_NO_INDEX
        assert "run `regbot ingest FOLDER` first" in one_line(err)
        assert str(data_dir) in err
        assert not data_dir.exists()
        assert out == "" and builder.calls == 0

    def test_eval_checks_the_index_after_the_file(self, tmp_path, builder, capsys):
        path = tmp_path / "items.jsonl"
        path.write_text('{"id": "q1", "type": "chitchat", "turns": [{"role": "user", "content": "안녕"}]}\n',
                        encoding="utf-8")
        code, _, err = run(["eval", str(path), "--data-dir", str(tmp_path / "none")], builder, capsys)
        assert code == common.EXIT_NO_INDEX
        assert "regbot ingest" in one_line(err)

    def test_an_empty_index_is_reported_as_empty(self, tmp_path, builder, capsys):
        write_index(tmp_path, chunks=0)
        code, _, err = run(["--data-dir", str(tmp_path), "ask", "연차는 며칠이야?"], builder, capsys)
        assert code == common.EXIT_NO_INDEX
        assert "is empty" in one_line(err)

    def test_the_data_dir_comes_from_the_environment_when_no_option_is_given(self, tmp_path, builder, capsys,
                                                                            monkeypatch):
        monkeypatch.setenv("REGBOT_DATA_DIR", str(tmp_path / "from-env"))
        code, _, err = run(["search", "연차"], builder, capsys)
        assert code == common.EXIT_NO_INDEX
        assert str(tmp_path / "from-env") in err


class TestQuestionLimit:
    def test_too_long_question_gets_the_same_message_as_every_surface(self, tmp_path, builder, capsys,
                                                                      monkeypatch):
        monkeypatch.setenv("REGBOT_MAX_QUESTION_CHARS", "50")
        write_index(tmp_path, chunks=1)
        code, out, err = run(["--data-dir", str(tmp_path), "ask", "가" * 51], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err) == "regbot: " + messages.TOO_LONG_QUESTION.format(length=51, limit=50)
        assert out == "" and builder.calls == 0

    def test_emoji_only_question_is_refused_before_building(self, tmp_path, builder, capsys):
        write_index(tmp_path, chunks=1)
        code, _, err = run(["--data-dir", str(tmp_path), "ask", "🙂🙂"], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err) == "regbot: " + messages.NO_TEXT_QUESTION


class TestOptions:
    def test_version_prints_the_version_and_exits_0(self, capsys):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["--version"])
        assert exit_info.value.code == 0
        assert capsys.readouterr().out.startswith("regbot ")

    def test_every_option_of_every_command_has_help_text(self):
        import argparse

        parser = cli.parser()
        parsers = [parser]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
        undocumented = [
            f"{p.prog} {action.dest}"
            for p in parsers for action in p._actions
            if not action.help and not isinstance(action, argparse._SubParsersAction)
        ]
        assert undocumented == []

    def test_help_documents_the_exit_codes(self, capsys):
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        help_text = capsys.readouterr().out
        for code in ("0", "1", "2", "3", "130"):
            assert f"\n  {code} " in help_text

    def test_ingest_of_a_missing_path_is_one_line(self, tmp_path, builder, capsys):
        code, _, err = run(["--data-dir", str(tmp_path / "d"), "ingest", str(tmp_path / "no-such-folder")],
                           builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err) == f"regbot: no such file or folder: {tmp_path / 'no-such-folder'}"
        assert not (tmp_path / "d").exists()

    def test_a_bad_setting_in_the_environment_is_one_line(self, tmp_path, builder, capsys, monkeypatch):
        monkeypatch.setenv("REGBOT_PORT", "not-a-port")
        code, _, err = run(["--data-dir", str(tmp_path), "search", "연차"], builder, capsys)
        assert code == common.EXIT_INPUT
        assert one_line(err).startswith("regbot: invalid setting REGBOT_PORT")


class TestReadme:
    def test_every_command_has_a_row_in_the_readme_command_table(self):
        from testkit import REPO_ROOT

        readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
        missing = [c.name for c in cli.COMMANDS if f"| `regbot {c.name}" not in readme]
        assert missing == [], f"README.md's command table lacks a row for: {', '.join(missing)}"

    def test_the_readme_points_to_the_generated_configuration_and_the_eval_format(self):
        from testkit import REPO_ROOT

        readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
        assert "(docs/configuration.md)" in readme and "(docs/eval.md)" in readme


def test_ask_json_for_a_turn_without_an_answer_keeps_the_answer_shape():
    from rag.models import Answer, Route

    assert set(chat.error_json("x")) == set(chat.answer_json(Answer(text="y", route=Route.SEARCH)))
    assert chat.error_json("실패")["route"] == "error"
