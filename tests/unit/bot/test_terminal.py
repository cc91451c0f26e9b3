"""bot/cli/terminal.py: how an answer reads on a terminal and in a pipe."""

from __future__ import annotations

import io

from rich.console import Console

from bot.cli.terminal import Terminal
from rag.models import Answer, Route


def rendered(text: str, *, terminal: bool) -> str:
    buffer = io.StringIO()
    out = Console(file=buffer, force_terminal=terminal, width=80, color_system=None)
    Terminal(out, Console(file=io.StringIO())).answer(Answer(text=text, route=Route.LOOKUP))
    return buffer.getvalue()


def test_an_outline_keeps_one_line_per_entry_instead_of_running_into_a_paragraph():
    outline = "여비 규정\n제1장 총칙\n제1조 목적\n제2조 여비의 종류"
    for terminal in (True, False):
        lines = [line.strip() for line in rendered(outline, terminal=terminal).splitlines() if line.strip()]
        assert lines[:4] == ["여비 규정", "제1장 총칙", "제1조 목적", "제2조 여비의 종류"]


def test_paragraphs_and_bold_still_render_as_markdown():
    printed = rendered("**제20조** 연차는 15일이에요.\n\n다음 문단", terminal=False)
    assert "**" not in printed
    assert "제20조 연차는 15일이에요." in printed and "다음 문단" in printed
