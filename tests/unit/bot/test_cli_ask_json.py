"""`regbot ask --json` after a turn that ended in an error keeps the text the answer had already streamed."""

from __future__ import annotations

import json
from types import SimpleNamespace

from bot.cli import cli, common
from rag import messages
from rag.models import AnswerEvent


class StreamsThenTimesOut:
    async def run(self, turn):
        yield AnswerEvent.status(messages.STATUS_WRITING)
        yield AnswerEvent.delta("연차는 1년에 ")
        yield AnswerEvent.delta("15일이에요 [1].")
        yield AnswerEvent.error(f"{messages.STREAM_INTERRUPTED}\n{messages.TIMEOUT}")


def test_json_keeps_the_streamed_text_before_the_error_message(sample_components, monkeypatch, capsys):
    monkeypatch.setenv("REGBOT_DATA_DIR", str(sample_components.settings.data_dir))
    stub = SimpleNamespace(pipeline=StreamsThenTimesOut())

    code = cli.main(["ask", "연차 며칠?", "--json"], build_components=lambda settings: stub)

    printed = json.loads(capsys.readouterr().out)
    assert code == common.EXIT_FAILED
    assert printed["route"] == "error"
    assert printed["answer"] == f"연차는 1년에 15일이에요 [1].\n\n{messages.STREAM_INTERRUPTED}\n{messages.TIMEOUT}"
