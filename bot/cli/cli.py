"""The `regbot` command line (DESIGN.md §3): ingest, ask, chat, search, eval, serve, playground.

Each command is one `cmd_*` function plus one `add_*_arguments` function, registered in `COMMANDS`.
`ask` and `chat` live in `bot.cli.chat`, `eval` in `bot.cli.eval`, `changes` and `report` in their own modules;
what they share (exit codes, consoles, `CliError`, the index check) in `bot.cli.common`.
Output: the answer (or table, or JSON) on stdout; status, progress, warnings and errors on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from bot.cli.changes import add_changes_arguments, cmd_changes
from bot.cli.chat import add_ask_arguments, add_chat_arguments, cmd_ask, cmd_chat
from bot.cli.common import (
    EXIT_FAILED,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CliError,
    build,
    checked_question,
    console,
    index_chunks,
    out,
    positive_int,
    require_index,
)
from bot.cli.eval import add_eval_arguments, cmd_eval
from bot.config import Settings
from rag.errors import RegbotError

EXIT_CODES_HELP = """exit codes:
  0    success
  1    the command ran and failed (no answer, a file that could not be ingested)
  2    bad input: an unknown option, a missing file, a bad eval line, a question too long
  3    no index in the data dir: run `regbot ingest FOLDER` first
  130  interrupted (Ctrl-C)"""


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
