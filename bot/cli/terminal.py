"""How the CLI shows an answer: Markdown rendered, citations as footnotes, follow-ups numbered, status in a
spinner on stderr that disappears.

stdout carries only the answer (so `regbot ask … > file` holds the answer and nothing else); what the bot is
doing goes to stderr, and only when stderr is a terminal.
"""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Heading, Markdown
from rich.spinner import Spinner
from rich.text import Text

from rag.answer_fold import AnswerFold
from rag.models import Answer, AnswerEvent, AnswerEventKind, Citation

# The CLI's own labels (the answer's words come from the pipeline).
SOURCES_LABEL = "출처"
FOLLOWUPS_LABEL = "이어서 물어볼 만한 질문"
FOLLOWUPS_HINT = "번호를 입력하면 그 질문을 이어서 물어봐요."
# Wide enough that a paragraph of Korean (two cells a character) stays on one line when stdout is not a terminal.
_PIPE_WIDTH = 1000


class _LeftHeading(Heading):
    """Headings aligned left: a centred title reads oddly above a short answer."""

    LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class AnswerMarkdown(Markdown):
    """rich's Markdown with left-aligned headings; a single newline stays a line break (answers are written line
    by line, as Slack and Teams show them: an outline's lines must not run together into one paragraph)."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, markup: str, **kwargs) -> None:
        super().__init__(_SINGLE_NEWLINE.sub("  \n", markup), **kwargs)


_SINGLE_NEWLINE = re.compile(r"(?<![\n ])\n(?!\n)")


@dataclass
class StreamResult:
    """What a streamed turn ended with: the final answer, or the error message the pipeline gave."""

    answer: Answer | None
    error: str = ""
    text: str = ""  # the answer text streamed (kept when the turn ends in an error)

    @classmethod
    def of(cls, fold: AnswerFold) -> StreamResult:
        return cls(answer=fold.answer, error=fold.error, text=fold.text)


class Terminal:
    """Renders answers on `out` (stdout) and status on `err` (stderr)."""

    def __init__(self, out: Console, err: Console) -> None:
        self.out = out
        self.err = err

    async def stream(self, events: AsyncIterator[AnswerEvent]) -> StreamResult:
        """Consume a turn's events; on a terminal, a spinner with the status and a preview of the answer
        (both on stderr, both gone once the turn ends)."""
        if not self.err.is_terminal:
            return await _collect(events)
        text: list[str] = []
        status = Spinner("dots", text=Text("", style="dim"))

        def view() -> Group:
            parts = [AnswerMarkdown("".join(text))] if text else []
            return Group(*parts, status)

        fold = AnswerFold()
        with Live(view(), console=self.err, transient=True, refresh_per_second=10, vertical_overflow="crop") as live:
            async for event in events:
                fold.take(event)
                if event.kind == AnswerEventKind.STATUS:
                    status.update(text=Text(event.text, style="dim"))
                elif event.kind == AnswerEventKind.DELTA:
                    text.append(event.text)
                live.update(view())
        return StreamResult.of(fold)

    def markdown(self, text: str) -> None:
        """Markdown on stdout: styled on a terminal, plain (no `**`, no padding) in a pipe or file."""
        self._print(AnswerMarkdown(text))

    def answer(self, answer: Answer, *, followup_hint: bool = False) -> None:
        """The answer, its citations as footnotes, and the follow-ups numbered."""
        self.markdown(answer.text)
        if answer.citations:
            self._print(Text(""))
            self._print(Text(SOURCES_LABEL, style="bold"))
            for citation in answer.citations:
                self._print(footnote(citation))
        if answer.followups:
            self._print(Text(""))
            self._print(Text(FOLLOWUPS_LABEL, style="bold"))
            for number, question in enumerate(answer.followups, 1):
                self._print(Text(f"  {number}. {question}"))
            if followup_hint:
                self._print(Text(FOLLOWUPS_HINT, style="dim"))

    def sources(self, citations: tuple[Citation, ...]) -> None:
        """Each citation with the passage it quotes (`/sources` in chat)."""
        for citation in citations:
            self._print(footnote(citation))
            if citation.quote:
                self._print(Text(f"     {citation.quote}", style="dim"))

    def _print(self, renderable) -> None:
        if self.out.is_terminal:
            self.out.print(renderable)
            return
        buffer = io.StringIO()
        Console(file=buffer, width=_PIPE_WIDTH, color_system=None, highlight=False).print(renderable)
        self.out.file.write("\n".join(line.rstrip() for line in buffer.getvalue().split("\n")))
        self.out.file.flush()


def footnote(citation: Citation) -> Text:
    """`[1] 취업규칙 제20조 제1항 — https://…`."""
    line = Text("  ")
    line.append(f"[{citation.index}]", style="bold cyan")
    line.append(f" {citation.label}")
    if citation.url:
        line.append(f" — {citation.url}", style="dim")
    return line


async def _collect(events: AsyncIterator[AnswerEvent]) -> StreamResult:
    fold = AnswerFold()
    async for event in events:
        fold.take(event)
    return StreamResult.of(fold)


__all__ = ["AnswerMarkdown", "StreamResult", "Terminal", "footnote"]
