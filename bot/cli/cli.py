"""The `regbot` command line (DESIGN.md §3): ingest, ask, chat, search, eval, serve, playground.

Each command is one `cmd_*` function plus one `add_*_arguments` function, registered in `COMMANDS`.
Output: the answer (or table, or JSON) on stdout; status, progress, warnings and errors on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from rich.console import Console

from bot.cli.changes import add_changes_arguments, cmd_changes
from bot.config import Settings
from rag.errors import RegbotError
from rag.models import Answer, Message, Role
from rag.text import normalize_text, question_problem

if TYPE_CHECKING:
    from rich.table import Table

    from bot.cli.terminal import StreamResult

EXIT_CODES_HELP = """exit codes:
  0    success
  1    the command ran and failed (no answer, a file that could not be ingested)
  2    bad input: an unknown option, a missing file, a bad eval line, a question too long
  3    no index in the data dir: run `regbot ingest FOLDER` first
  130  interrupted (Ctrl-C)"""
EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_NO_INDEX, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# The CLI's own words; what an answer says comes from rag/messages.py.
LOADING = "규정 색인을 불러오는 중…"
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

class StdoutConsole(Console):
    """stdout. rich ends the process with status 1 when the reader leaves (`regbot report | head`); here that is a
    BrokenPipeError, which `main` turns into a quiet exit 0 as for every other command."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


console = Console(stderr=True)
out = StdoutConsole()


class CliError(Exception):
    """A problem the user can fix; printed as one line on stderr, with `code` as the exit status."""

    def __init__(self, message: str, code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.code = code


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


# --- building blocks ----------------------------------------------------------------------------


def index_chunks(data_dir: Path) -> int | None:
    """Chunks in the index of `data_dir` (None: no index there); reads without creating anything."""
    path = data_dir / "index.sqlite"
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    except sqlite3.Error:
        return None


def looked_in(settings: Settings, *, flag: bool) -> str:
    """Where the data dir was looked for, in the order `Settings` looks (docs/configuration.md "The data dir")."""
    import os

    from bot.config import project_dir_candidates, user_data_dir

    if flag:
        return f"{settings.data_dir} (--data-dir)"
    if any(name.upper() == "REGBOT_DATA_DIR" for name in os.environ):
        return f"{settings.data_dir} (REGBOT_DATA_DIR)"
    candidates = project_dir_candidates()
    if settings.data_dir in candidates:
        return f"{settings.data_dir} (the nearest .regbot folder)"
    return ", ".join(str(p) for p in (*candidates, user_data_dir()))


def require_index(settings: Settings, args: argparse.Namespace) -> None:
    """A read command's first step: the index must exist and hold chunks (nothing is created otherwise). The
    message names every place looked in, so an index written elsewhere (the demo's `./.regbot`) is easy to spot."""
    chunks = index_chunks(settings.data_dir)
    places = looked_in(settings, flag=bool(getattr(args, "data_dir", None)))
    if chunks is None:
        raise CliError(f"no index found (looked in {places}): run `regbot ingest FOLDER` first, or point "
                       "--data-dir / REGBOT_DATA_DIR at an index", EXIT_NO_INDEX)
    if chunks == 0:
        raise CliError(f"the index in {settings.data_dir} is empty: run `regbot ingest FOLDER`", EXIT_NO_INDEX)


def build(settings: Settings):
    """The components, built under a spinner on stderr (loading Kiwi and the indexes takes a few seconds)."""
    from bot.app import build_components

    with console.status(LOADING):
        return build_components(settings)


def checked_question(text: str, settings: Settings) -> str:
    """The question, NFC; CliError with the same message every surface gives when it cannot be asked."""
    question = normalize_text(text).strip()
    problem = question_problem(question, max_chars=settings.max_question_chars)
    if problem:
        raise CliError(problem)
    return question


async def run_turn(components, terminal, question: str, history: tuple[Message, ...] = ()) -> StreamResult:
    from rag.models import Turn

    return await terminal.stream(components.pipeline.run(Turn(turn_id="cli", text=question, history=history)))


# --- commands -----------------------------------------------------------------------------------


def add_ingest_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to index (folders recursively)")
    p.add_argument("--collection", default="default", help="collection to index into (default: %(default)s)")
    p.add_argument("--prune", action="store_true", help="remove indexed files that no longer exist")


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from rag.knowledge.ingest import discover_files
    from rag.knowledge.loaders import LoaderRegistry

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise CliError(f"no such file or folder: {', '.join(missing)}")
    paths = [Path(p) for p in args.paths]
    registry = LoaderRegistry()
    files, passed = discover_files(paths, registry)
    if not files and not args.prune:  # --prune over an emptied folder still has work: removing what is gone
        skipped = f" ({len(passed)} other file(s) passed over, e.g. {passed[0].reason})" if passed else ""
        raise CliError(f"no supported files in {', '.join(args.paths)}{skipped}; supported: "
                       f"{' '.join(sorted(registry.extensions))}")
    console.print(f"data dir: {settings.data_dir}", soft_wrap=True, highlight=False)
    components = args.build(settings)
    ingestor = components.ingestor()
    done_files = [0]
    # On a terminal: files done of the files found, and inside a big file its chunks tokenised and embedded.
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=True) as progress:
        task = progress.add_task("ingest", total=len(files))
        inside = progress.add_task("", total=None, visible=False)

        phase_shown = [""]

        def on_file(name: str, done: int) -> None:
            done_files[0] = done
            progress.update(task, description=f"ingest {name}", completed=done)
            progress.reset(inside, total=None, visible=False)
            phase_shown[0] = ""

        def on_chunks(name: str, phase: str, done: int, total: int) -> None:
            if phase != phase_shown[0]:  # a new phase starts its own clock, so the time left stays honest
                progress.reset(inside, total=total)
                phase_shown[0] = phase
            progress.update(inside, description=f"  {phase} {name} (chunks)", completed=done, total=total,
                            visible=True)

        try:
            report = ingestor.ingest(paths, collection=args.collection, prune=args.prune, progress=on_file,
                                     file_progress=on_chunks)
        except KeyboardInterrupt:
            # Each finished file is committed; the next run skips them as unchanged.
            raise CliError(f"interrupted: indexed {done_files[0]} of {len(files)} files; run ingest again to "
                           "continue", EXIT_INTERRUPTED) from None
    table = Table(title=f"regbot ingest → collection '{args.collection}' ({report.seconds:.1f}s)")
    for column in ("file", "status", "document", "chunks", "embedded", "reason"):
        table.add_column(column)
    for o in report.outcomes:
        style = {"failed": "red", "unchanged": "dim", "skipped": "yellow"}.get(o.status, "")
        name = Path(o.path).name
        reason = o.reason.removeprefix(f"{name}: ")  # loaders name the file; the row already does
        table.add_row(name, o.status, o.doc, str(o.chunks), str(o.embedded), reason, style=style)
    console.print(table)
    console.print(f"added {report.count('added')}, updated {report.count('updated')}, "
                  f"unchanged {report.count('unchanged')}, removed {report.count('removed')}, "
                  f"skipped {report.count('skipped')}, failed {len(report.failed)} → {settings.data_dir}",
                  soft_wrap=True, highlight=False)
    return EXIT_FAILED if report.failed else EXIT_OK


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


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", help="what to search for")
    p.add_argument("-k", type=positive_int, default=10, metavar="N", help="number of hits (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the hits as JSON (DESIGN.md §3 shape)")


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    query = checked_question(args.query, settings)
    require_index(settings, args)
    components = args.build(settings)
    hits = components.retriever.search_sync(query, k=args.k)
    rows = [{"doc": h.chunk.doc, "article": h.chunk.article, "title": h.chunk.title, "score": round(h.score, 6),
             "text": h.chunk.text, "chunk_id": h.chunk.chunk_id} for h in hits]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    table = Table(title=f"search: {query}")
    for column in ("#", "document", "article", "title", "score"):
        table.add_column(column)
    for i, row in enumerate(rows, 1):
        table.add_row(str(i), row["doc"], row["article"], row["title"], f"{row['score']:.4f}")
    out.print(table)
    return EXIT_OK


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="eval file: one JSON object a line (docs/eval.md)")
    p.add_argument("-k", type=positive_int, default=10, metavar="N", help="hits scored per item (default: %(default)s)")
    p.add_argument("--json", action="store_true", help='print {"metrics", "by_type", "items"} as JSON')


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from rag.eval import Evaluator, dumps, load_eval_file

    items = load_eval_file(Path(args.file))
    require_index(settings, args)
    components = args.build(settings)
    names = components.lookup.names()

    def same_doc(gold: str, doc: str) -> bool:
        resolved = names.resolve(gold)
        return (resolved.doc or gold).replace(" ", "") == doc.replace(" ", "")

    evaluator = Evaluator(components.pipeline, same_doc=same_doc, k=args.k)
    with Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), console=console, transient=True) as bar:
        task = bar.add_task("eval", total=len(items))
        result = asyncio.run(evaluator.run(items, progress=lambda n: bar.update(task, completed=n)))
    if args.json:
        print(dumps(result))
        return 0
    out.print(eval_table(result, title=f"regbot eval {args.file}"))
    metrics = result["metrics"]
    out.print(" · ".join(f"{label} {_figure(metrics.get(key))}" for key, label in EVAL_HEADLINE))
    return 0


# The figures a reader looks for first (DESIGN.md §3 "Eval figures").
EVAL_HEADLINE = (("refusal_rate_out_of_scope", "out-of-scope refused"),
                 ("false_refusal_rate_answerable", "answerable refused"),
                 ("hedged_rate_answerable", "answerable hedged"),
                 ("hedged_rate_out_of_scope", "out-of-scope hedged"),
                 ("no_retrieval_rate_chitchat", "small talk without retrieval"),
                 ("keyword_coverage_first_200", "keywords in first 200 chars"))


def _figure(value) -> str:
    return "–" if value is None else str(value)


def eval_table(result: dict, *, title: str) -> Table:
    """Metrics as rows and item types as columns ("all" first), so the table stays narrow as metrics are added."""
    from rich.table import Table

    columns = [("all", result["metrics"]), *result["by_type"].items()]
    table = Table(title=title)
    # A narrow terminal wraps names onto a second line instead of cutting them (two metrics share their first 16
    # characters): metrics are shown with spaces for their JSON key's underscores; figures ("0.6667") never wrap.
    table.add_column("metric", overflow="fold")
    for name, _ in columns:
        table.add_column(name.replace("_", " "), justify="right", min_width=6, overflow="fold")
    for metric in result["metrics"]:
        values = [values.get(metric) for _, values in columns]
        if all(v is None for v in values):
            continue
        table.add_row(metric.replace("_", " "), *["" if v is None else str(v) for v in values])
    return table


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Slack (/slack/events), Teams (/api/messages), /healthz, /readyz, /metrics; the web playground "
                     "with REGBOT_PLAYGROUND=true. Address: REGBOT_HOST:REGBOT_PORT.")
    p.add_argument("--port", type=int, default=None, help="port (default: REGBOT_PORT or 3978)")


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from bot.server.logging_setup import configure_logging
    from bot.server.server import PortInUse, serve

    if args.port is not None:
        settings = settings.model_copy(update={"port": args.port})
    # A person at a terminal reads the start-up block; INFO's JSON lines are for log collectors (or -v).
    level = logging.DEBUG if args.verbose else logging.WARNING if sys.stderr.isatty() else logging.INFO
    configure_logging(log_content=settings.log_content, level=level)
    try:
        return serve(settings)
    except PortInUse as exc:
        raise CliError(str(exc), EXIT_FAILED) from None


def add_playground_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=None, help="port (default: REGBOT_PORT or 3978)")
    p.add_argument("--no-browser", action="store_true", help="only print the address")


def cmd_playground(args: argparse.Namespace, settings: Settings) -> int:
    """`regbot serve` with the web playground on, bound to this machine only; prints (and opens) its address."""
    import os
    import webbrowser

    from bot.server.server import PORT_IN_USE, PortInUse, build_runtime, create_app, port_in_use, run_until_stopped

    port = args.port if args.port is not None else settings.port
    settings = settings.model_copy(update={"playground": True, "host": "127.0.0.1", "port": port})
    if port_in_use(settings.host, port):
        raise CliError(PORT_IN_USE.format(port=port), EXIT_FAILED)
    if not index_chunks(settings.data_dir):
        console.print(f"[yellow]no index in {settings.data_dir} yet: run `regbot ingest FOLDER` to give the "
                      "playground something to answer from[/yellow]", highlight=False)
    components = args.build(settings)
    components.warm_up()
    url = f"http://127.0.0.1:{port}/"

    def ready(_: str) -> None:  # run_app calls this once the port is listening
        out.print(f"regbot playground: {url}  (끝내려면 Ctrl-C)")
        # Without a display, webbrowser would start a text browser in this terminal: only print the address.
        if not args.no_browser and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                    or sys.platform in ("darwin", "win32")):
            webbrowser.open(url)

    try:
        run_until_stopped(create_app(build_runtime(settings, components)), settings, ready=ready)
    except PortInUse as exc:
        raise CliError(str(exc), EXIT_FAILED) from None
    return 0


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", default="7d", help="window such as 7d, 24h, 2w (default 7d)")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print one JSON object (DESIGN.md §3 keys)")
    shown.add_argument("--html", metavar="FILE", help="write the report with charts to FILE")
    p.add_argument("--purge", action="store_true", help="delete records older than REGBOT_RECORDS_DAYS")
    p.add_argument("--all", action="store_true", help="with --purge: delete every record")


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    """What was asked, answered, refused (by theme) and disliked, from the turn records `serve` writes."""
    from bot.cli.report import run_report

    return run_report(settings, since=args.since, as_json=args.json, html_file=args.html, purge=args.purge,
                      purge_all=args.all, out=out, err=console)


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, its arguments and what it runs."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Settings], int]


COMMANDS: list[Command] = [
    Command("ingest", "index files or folders (incremental)", add_ingest_arguments, cmd_ingest),
    Command("ask", "answer one question", add_ask_arguments, cmd_ask),
    Command("chat", "a conversation in the terminal (/help inside)", add_chat_arguments, cmd_chat),
    Command("search", "retrieval only: the best matching passages", add_search_arguments, cmd_search),
    Command("eval", "score an eval file and print metrics", add_eval_arguments, cmd_eval),
    Command("serve", "the HTTP server for Slack, Teams, health and metrics", add_serve_arguments, cmd_serve),
    Command("playground", "the web playground on 127.0.0.1 (opens a browser when there is one)",
            add_playground_arguments, cmd_playground),
    Command("report", "what was asked, answered, refused (by theme) and disliked", add_report_arguments, cmd_report),
    Command("changes", "article-level changes between ingested versions", add_changes_arguments, cmd_changes),
]


# --- parsing and running ------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        return package_version("regbot")
    except PackageNotFoundError:
        return "unknown"


def _common_options(*, suppress: bool) -> argparse.ArgumentParser:
    """Options accepted before or after the command name (`regbot -v ask …` and `regbot ask -v …`)."""
    default = argparse.SUPPRESS if suppress else None
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="log at INFO (and show tracebacks of unexpected errors)")
    common.add_argument("--data-dir", type=Path, default=default, metavar="DIR",
                        help="index and local state (default: REGBOT_DATA_DIR, else the nearest .regbot folder, else a "
                        "per-user data directory)")
    return common


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="regbot", description="regbot — answers questions about your regulations "
                                "(규정 안내 봇), with the article it relies on.", epilog=EXIT_CODES_HELP,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                parents=[_common_options(suppress=False)])
    p.add_argument("--version", action="version", version=f"regbot {version()}", help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        s = sub.add_parser(command.name, help=command.help, description=command.help,
                           parents=[_common_options(suppress=True)])
        command.add_arguments(s)
        s.set_defaults(func=command.run)
    return p


def configure_cli_logging(verbose: bool) -> None:
    """Warnings and errors on stderr (INFO with -v), drawn so they do not break a spinner or progress bar."""
    handler: logging.Handler
    if console.is_terminal:
        from rich.logging import RichHandler

        handler = RichHandler(console=console, show_time=False, show_path=False, markup=False)
        handler.setFormatter(logging.Formatter("%(message)s"))
    else:  # a file or a pipe: plain lines, never wrapped or padded
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)


def main(argv: list[str] | None = None, *, build_components: Callable | None = None) -> int:
    """Run one command; `build_components(settings)` replaces the default builder (tests pass prebuilt ones).
    `regbot` alone prints the commands on stdout and exits 0 (asking what there is is not a mistake)."""
    argv = sys.argv[1:] if argv is None else argv
    p = parser()
    if not argv:
        p.print_help()
        return EXIT_OK
    mistyped = unknown_command(p, argv)
    if mistyped:
        say_error(mistyped)
        return EXIT_INPUT
    args = p.parse_args(argv)
    configure_cli_logging(args.verbose)
    args.build = build_components or build
    try:
        settings = Settings(data_dir=args.data_dir) if args.data_dir else Settings()
        return args.func(args, settings)
    except CliError as exc:
        say_error(str(exc))
        return exc.code
    except ValidationError as exc:  # a setting from the environment that does not parse
        problem = exc.errors()[0]
        say_error(f"invalid setting {'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}")
        return EXIT_INPUT
    except RegbotError as exc:
        say_error(str(exc))
        return EXIT_INPUT if isinstance(exc, _input_errors()) else EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `regbot ask … | head`: the reader left; not an error to report
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the interpreter's final flush is quiet
        return EXIT_OK
    except Exception as exc:
        if args.verbose:
            console.print_exception()
        else:
            say_error(f"unexpected error ({exc.__class__.__name__}: {exc}); run with -v for details")
        return EXIT_FAILED


def unknown_command(p: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """"unknown command 'injest': did you mean `regbot ingest`?" for a command name that is not one; None otherwise
    (argparse reports every other mistake)."""
    import difflib

    names = next(list(a.choices) for a in p._actions if isinstance(a, argparse._SubParsersAction))
    words = iter(argv)
    for word in words:
        if word == "--data-dir":
            next(words, None)  # its value
        elif word.startswith("-"):
            continue
        elif word in names:
            return None
        else:
            close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
            hint = f"did you mean `regbot {close[0]}`?" if close else f"the commands are {', '.join(names)}"
            return f"unknown command '{word}': {hint} (`regbot --help` for more)"
    return None


def say_error(message: str) -> None:
    """One line on stderr, never wrapped (rich would wrap it at 80 columns in a pipe)."""
    sys.stderr.write(f"regbot: {' '.join(message.split())}\n")
    sys.stderr.flush()


def _input_errors() -> tuple[type[Exception], ...]:
    from rag.errors import ConfigError, EvalFileError

    return (EvalFileError, ConfigError)


if __name__ == "__main__":
    raise SystemExit(main())
