"""`regbot ask`, `search` and `chat` over the sample index: the `--json` contracts of DESIGN.md §3, an answer
rendered for people (no raw Markdown, citations as footnotes, numbered follow-ups, no status lines on stdout),
and chat commands."""

from __future__ import annotations

import io
import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from bot.cli import cli, common
from rag import messages
from rag.models import AnswerEvent, Turn

STATUS_LINES = [v for k, v in vars(messages).items() if k.startswith("STATUS_") and isinstance(v, str)]


class RecordingPipeline:
    """The real pipeline, remembering each turn it was asked (question and history)."""

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self.turns: list[Turn] = []

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        self.turns.append(turn)
        async for event in self.pipeline.run(turn):
            yield event


@pytest.fixture
def recording(sample_components):
    return replace(sample_components, pipeline=RecordingPipeline(sample_components.pipeline))


def run(argv, components, capsys, *, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    data_dir = str(components.settings.data_dir)
    code = cli.main(["--data-dir", data_dir, *argv], build_components=lambda settings: components)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


class TestJsonContracts:
    def test_ask_json_has_exactly_the_answer_shape(self, recording, capsys):
        code, out, _ = run(["ask", "연차휴가는 며칠이야?", "--json"], recording, capsys)
        assert code == 0
        answer = json.loads(out)
        assert set(answer) == {"answer", "route", "citations", "followups", "llm_calls", "timings_ms"}
        assert isinstance(answer["answer"], str) and answer["answer"]
        assert answer["route"] in ("search", "lookup", "chitchat")
        assert answer["citations"], "an answer from the samples cites them"
        for citation in answer["citations"]:
            assert set(citation) == {"doc", "article", "title", "quote", "url"}
            assert all(isinstance(v, str) for v in citation.values())
        assert any(c["doc"] == "취업규칙" and c["article"] == "제20조" for c in answer["citations"])
        assert all(isinstance(f, str) for f in answer["followups"])
        assert isinstance(answer["llm_calls"], int)
        assert all(isinstance(v, int | float) for v in answer["timings_ms"].values())

    def test_search_json_is_a_list_of_hits_with_exactly_the_hit_shape(self, recording, capsys):
        code, out, _ = run(["search", "연차휴가 일수", "-k", "3", "--json"], recording, capsys)
        assert code == 0
        hits = json.loads(out)
        assert isinstance(hits, list) and 1 <= len(hits) <= 3
        for hit in hits:
            assert set(hit) == {"doc", "article", "title", "score", "text", "chunk_id"}
            assert isinstance(hit["score"], float)
            assert all(isinstance(hit[k], str) for k in ("doc", "article", "title", "text", "chunk_id"))
        assert any(h["doc"] == "취업규칙" and h["article"] == "제20조" for h in hits)


class TestAskRendering:
    def test_answer_on_stdout_is_rendered_with_footnotes_and_numbered_followups(self, recording, capsys):
        code, out, err = run(["ask", "연차휴가는 며칠이야?"], recording, capsys)
        assert code == 0
        assert "**" not in out, "Markdown is rendered, not printed raw"
        assert "15일" in out
        assert "  [1] 취업규칙" in out
        assert "\n  1. " in out
        for status in STATUS_LINES:
            fragment = max(re.split(r"\{[^}]*\}", status), key=len)  # the longest literal part of a template
            assert fragment not in out + err
        assert err == ""

    def test_debug_prints_the_data_dir_on_stderr(self, recording, capsys):
        code, out, err = run(["ask", "연차휴가는 며칠이야?", "--debug"], recording, capsys)
        assert code == 0
        assert f"data_dir={recording.settings.data_dir}" in err.replace("\n", "")
        assert "data_dir=" not in out


class TestChat:
    def test_a_number_asks_that_followup_with_the_conversation_so_far(self, recording, capsys, monkeypatch):
        stdin = "연차휴가는 며칠이야?\n2\n/quit\n"
        code, out, err = run(["chat"], recording, capsys, stdin=stdin, monkeypatch=monkeypatch)
        assert code == 0
        _, second = recording.pipeline.turns
        offered = next(line for line in out.splitlines() if line.startswith("  2. "))
        assert second.text == offered.removeprefix("  2. ")
        assert second.history[0].content == "연차휴가는 며칠이야?"
        assert f"→ {second.text}" in err

    def test_help_reset_and_sources_are_commands_not_questions(self, recording, capsys, monkeypatch):
        stdin = "/help\n연차휴가는 며칠이야?\n/sources\n/reset\n출장비는 어떻게 정산해?\n/quit\n이건 묻지 않아\n"
        code, out, err = run(["chat"], recording, capsys, stdin=stdin, monkeypatch=monkeypatch)
        assert code == 0
        asked = [t.text for t in recording.pipeline.turns]
        assert asked == ["연차휴가는 며칠이야?", "출장비는 어떻게 정산해?"]
        assert recording.pipeline.turns[1].history == (), "/reset starts a new conversation"
        assert "/reset" in err  # the help text
        assert "1부를 직원에게 준다" in out or "15일의 연차유급휴가를 준다" in out  # /sources prints the quotes

    def test_a_number_without_followups_is_not_asked(self, recording, capsys, monkeypatch):
        code, _, err = run(["chat"], recording, capsys, stdin="3\n", monkeypatch=monkeypatch)
        assert code == 0
        assert recording.pipeline.turns == []
        assert "이어지는 질문" in err


class TestIngest:
    def test_a_bad_file_is_reported_once_and_the_data_dir_is_printed(self, tmp_path, kiwi_tokenizer, capsys):
        from bot.app import build_components
        from testkit import HashingEmbedder

        folder = tmp_path / "rules"
        folder.mkdir()
        (folder / "ok.md").write_text("# 휴가 지침\n\n제1조(휴가) 휴가는 미리 신청한다.\n", encoding="utf-8")
        (folder / "noise.txt").write_bytes(bytes(range(1, 32)) * 100)
        data_dir = tmp_path / "data"

        def build(settings):
            return build_components(settings, embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer)

        code = cli.main(["--data-dir", str(data_dir), "ingest", str(folder)], build_components=build)
        err = capsys.readouterr().err
        assert code == common.EXIT_FAILED
        assert f"data dir: {data_dir}" in err
        assert err.count("noise.txt") == 1, err
        assert "Traceback" not in err and "WARNING" not in err
