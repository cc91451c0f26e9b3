"""What a new user meets at the command line: `regbot` alone lists the commands, a mistyped command gets a "did you
mean", output piped into `head` ends quietly with 0, ingest counts files (and refuses an empty folder), and a
Ctrl-C during a chat answer cancels the answer, not the chat."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from bot.cli import chat, cli, common
from rag import messages
from rag.models import Answer, AnswerEvent, Route
from testkit import REPO_ROOT


def test_regbot_alone_lists_the_commands_and_exits_0(capsys):
    assert cli.main([]) == common.EXIT_OK
    printed = capsys.readouterr().out
    for name in ("ingest", "ask", "chat", "search", "eval", "serve", "playground", "report"):
        assert f"    {name}" in printed


@pytest.mark.parametrize(("argv", "suggested"), [(["injest", "samples"], "ingest"),
                                                 (["--data-dir", "/x", "serch", "연차"], "search"),
                                                 (["-v", "playgrond"], "playground")])
def test_a_mistyped_command_gets_a_did_you_mean(argv, suggested, capsys):
    assert cli.main(argv) == common.EXIT_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean `regbot {suggested}`?" in err


def test_an_unknown_command_far_from_any_lists_them(capsys):
    assert cli.main(["frobnicate"]) == common.EXIT_INPUT
    assert "the commands are ingest, ask" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["report"], ["search", "연차"]])
def test_output_piped_into_a_reader_that_left_exits_0_quietly(sample_components, command):
    """`regbot … | head`: the reader is gone before the first write (its end of the pipe is closed)."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "REGBOT_DATA_DIR": str(sample_components.settings.data_dir), "REGBOT_LLM": "offline"}
    run = subprocess.run([sys.executable, "-m", "bot.cli", *command], cwd=REPO_ROOT, env=env, stdout=write,
                         stderr=subprocess.PIPE, text=True, timeout=180)
    os.close(write)
    assert run.returncode == 0, run.stderr
    assert "Error" not in run.stderr and "Traceback" not in run.stderr


class TestIngest:
    def test_an_empty_folder_says_no_supported_files_and_exits_non_zero(self, tmp_path, capsys):
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "budget.xlsx").write_bytes(b"x")
        code = cli.main(["--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "docs")],
                        build_components=lambda s: pytest.fail("built for an empty folder"))
        err = capsys.readouterr().err
        assert code == common.EXIT_INPUT
        assert f"regbot: no supported files in {tmp_path / 'docs'}" in err and ".md" in err and ".xlsx" in err
        assert not (tmp_path / "data").exists()

    def test_ctrl_c_says_how_many_files_were_kept(self, tmp_path, capsys):
        docs = tmp_path / "docs"
        docs.mkdir()
        for n in range(3):
            (docs / f"rule{n}.md").write_text(f"# 규정 {n}\n\n제1조(목적) 내용 {n}.\n", encoding="utf-8")

        class StopsAfterTwo:
            def ingest(self, paths, *, collection, prune, progress, file_progress):
                progress("rule0.md", 1)
                progress("rule1.md", 2)
                raise KeyboardInterrupt

        stub = SimpleNamespace(ingestor=StopsAfterTwo)
        code = cli.main(["--data-dir", str(tmp_path / "data"), "ingest", str(docs)], build_components=lambda s: stub)
        assert code == common.EXIT_INTERRUPTED
        assert capsys.readouterr().err.splitlines()[-1] == (
            "regbot: interrupted: indexed 2 of 3 files; run ingest again to continue")


class InterruptedOnce:
    """The first answer is interrupted by Ctrl-C; the second is answered."""

    def __init__(self) -> None:
        self.turns = 0

    async def run(self, turn):
        self.turns += 1
        yield AnswerEvent.status(messages.STATUS_WRITING)
        if self.turns == 1:
            raise KeyboardInterrupt
        answer = Answer(text="두 번째 답이에요.", route=Route.SEARCH)
        yield AnswerEvent.delta(answer.text)
        yield AnswerEvent.done(answer)


def test_chat_survives_a_ctrl_c_during_an_answer(sample_components, monkeypatch, capsys):
    monkeypatch.setenv("REGBOT_DATA_DIR", str(sample_components.settings.data_dir))
    monkeypatch.setattr(sys, "stdin", io.StringIO("연차 며칠이야?\n출장비는?\n"))
    pipeline = InterruptedOnce()
    code = cli.main(["chat"], build_components=lambda settings: SimpleNamespace(pipeline=pipeline))
    captured = capsys.readouterr()
    assert code == common.EXIT_OK and pipeline.turns == 2
    assert chat.CHAT_CANCELLED in captured.err
    assert "두 번째 답이에요." in captured.out
