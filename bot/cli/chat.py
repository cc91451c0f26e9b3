"""`regbot ask` and `regbot chat`: the pipeline run in-process, its answer shown on the terminal (or as JSON)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bot.cli.common import EXIT_FAILED, EXIT_OK, CliError, checked_question, console, out, require_index
from bot.config import Settings
from rag.models import Answer, Message, Role

if TYPE_CHECKING:
    from bot.cli.terminal import StreamResult

# The chat's own words; what an answer says comes from rag/messages.py.
CHAT_WELCOME = "regbot — 규정에 대해 물어보세요. 명령은 /help, 끝내려면 /quit 또는 Ctrl-D."
CHAT_PROMPT = "\n질문> "
CHAT_HELP = """/help      이 도움말
/reset     대화 기록을 지우고 새로 시작
/sources   마지막 답변의 출처와 인용문
/quit      끝내기 (/exit, Ctrl-D)
1, 2, 3    마지막 답변의 이어지는 질문을 번호로 묻기"""
CHAT_RESET = "대화 기록을 지웠어요."
CHAT_NO_SOURCES = "아직 출처가 있는 답변이 없어요."
CHAT_UNKNOWN_COMMAND = "모르는 명령이에요: {command} (/help 참고)"
CHAT_NO_FOLLOWUPS = "고를 수 있는 이어지는 질문이 아직 없어요. 질문을 글로 적어 주세요."
CHAT_PICK_NUMBER = "1부터 {count}까지의 번호를 골라 주세요."
NO_ANSWER = "답변을 만들지 못했어요."
CHAT_CANCELLED = "답변을 멈췄어요. 다른 질문을 입력하거나 /quit 으로 끝내세요."


def answer_json(answer: Answer) -> dict:
    return {
        "answer": answer.text,
        "route": answer.route.value,
        "citations": [c.model_dump(include={"doc", "article", "title", "quote", "url"}) for c in answer.citations],
        "followups": list(answer.followups),
        "llm_calls": answer.llm_calls,
        "timings_ms": answer.timings_ms,
    }


def error_json(message: str, *, streamed: str = "") -> dict:
    """The answer shape for a turn that produced no answer; text already streamed stays before the message (the
    JSON reader saw none of it, and it was right so far)."""
    shown = streamed.rstrip()
    return {"answer": f"{shown}\n\n{message}" if shown else message, "route": "error", "citations": [],
            "followups": [], "llm_calls": 0, "timings_ms": {}}


async def run_turn(components, terminal, question: str, history: tuple[Message, ...] = ()) -> StreamResult:
    from rag.models import Turn

    return await terminal.stream(components.pipeline.run(Turn(turn_id="cli", text=question, history=history)))


def add_ask_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--json", action="store_true", help="print the answer as JSON (DESIGN.md §3 shape)")
    p.add_argument("--debug", action="store_true", help="also print the data dir, route, timings and flow log")


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.terminal import Terminal

    question = checked_question(args.question, settings)
    require_index(settings, args)
    components = args.build(settings)
    terminal = Terminal(out, console)
    result = asyncio.run(run_turn(components, terminal, question))
    answer, error = result.answer, result.error
    if answer is None:
        if args.json:
            print(json.dumps(error_json(error, streamed=result.text), ensure_ascii=False))
        raise CliError(error or NO_ANSWER, EXIT_FAILED)
    if args.json:
        print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
        return EXIT_OK
    terminal.answer(answer)
    if args.debug:
        console.print(f"[dim]data_dir={settings.data_dir} route={answer.route.value} llm_calls={answer.llm_calls} "
                      f"timings_ms={answer.timings_ms}", highlight=False)
        for note in answer.notes:
            console.print(f"[dim]  {note}", highlight=False)
    return EXIT_OK



def add_chat_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = "in the chat:\n" + CHAT_HELP
    p.formatter_class = argparse.RawDescriptionHelpFormatter


def read_lines(prompt: str) -> Iterator[str]:
    """Lines typed by the user (with line editing on a terminal; no prompt when stdin is a pipe)."""
    while True:
        try:
            line = input(prompt) if sys.stdin.isatty() else sys.stdin.readline()
        except (EOFError, KeyboardInterrupt):
            return
        if not sys.stdin.isatty() and not line:
            return
        yield line


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.terminal import Terminal

    require_index(settings, args)
    components = args.build(settings)
    terminal = Terminal(out, console)
    history: list[Message] = []
    last: Answer | None = None
    console.print(CHAT_WELCOME)
    for line in read_lines(CHAT_PROMPT):
        text = line.strip()
        if not text:
            continue
        command = text.lower()
        if command in ("/quit", "/exit", "/q"):
            break
        if command in ("/help", "/?"):
            console.print(CHAT_HELP, highlight=False)
            continue
        if command == "/reset":
            history.clear()
            last = None
            console.print(CHAT_RESET)
            continue
        if command == "/sources":
            if last is None or not last.citations:
                console.print(CHAT_NO_SOURCES)
            else:
                terminal.sources(last.citations)
            continue
        if text.startswith("/"):
            console.print(CHAT_UNKNOWN_COMMAND.format(command=text), markup=False)
            continue
        if text.isdigit() and len(text) <= 2:
            if last is None or not last.followups:
                console.print(CHAT_NO_FOLLOWUPS)
                continue
            number = int(text)
            if not 1 <= number <= len(last.followups):
                console.print(CHAT_PICK_NUMBER.format(count=len(last.followups)))
                continue
            text = last.followups[number - 1]
            console.print(f"[dim]→ {text}", highlight=False)
        try:
            question = checked_question(text, settings)
        except CliError as exc:
            console.print(str(exc))
            continue
        try:
            result = asyncio.run(run_turn(components, terminal, question, tuple(history)))
        except KeyboardInterrupt:  # Ctrl-C during an answer cancels that answer, not the chat
            console.print(CHAT_CANCELLED)
            continue
        answer, error = result.answer, result.error
        if answer is None:
            console.print(error or NO_ANSWER, markup=False)
            continue
        terminal.answer(answer, followup_hint=True)
        last = answer
        history.extend([Message(role=Role.USER, content=question), Message(role=Role.ASSISTANT, content=answer.text)])
    return EXIT_OK
