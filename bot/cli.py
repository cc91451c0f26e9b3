"""The `regbot` command line (DESIGN.md §3): ingest, ask, chat, search, eval, serve, playground."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bot.config import Settings
from rag.models import Answer, AnswerEventKind, Message, Role

console = Console(stderr=True)
out = Console(soft_wrap=True)


def answer_json(answer: Answer) -> dict:
    return {
        "answer": answer.text,
        "route": answer.route.value,
        "citations": [c.model_dump(include={"doc", "article", "title", "quote", "url"}) for c in answer.citations],
        "followups": list(answer.followups),
        "llm_calls": answer.llm_calls,
        "timings_ms": answer.timings_ms,
    }


def build(settings: Settings):
    from bot.app import build_components

    with console.status("규정 색인을 불러오는 중…"):
        return build_components(settings)


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    components = build(settings)
    ingestor = components.ingestor()
    paths = [Path(p) for p in args.paths]
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("ingest", total=None)

        def on_file(name: str, done: int) -> None:
            progress.update(task, description=f"ingest {name}", completed=done)

        report = ingestor.ingest(paths, collection=args.collection, prune=args.prune, progress=on_file)
    table = Table(title=f"regbot ingest → collection '{args.collection}' ({report.seconds:.1f}s)")
    for column in ("file", "status", "document", "chunks", "embedded", "reason"):
        table.add_column(column)
    for o in report.outcomes:
        style = {"failed": "red", "unchanged": "dim", "skipped": "yellow"}.get(o.status, "")
        table.add_row(Path(o.path).name, o.status, o.doc, str(o.chunks), str(o.embedded), o.reason, style=style)
    console.print(table)
    console.print(f"added {report.count('added')}, updated {report.count('updated')}, "
                  f"unchanged {report.count('unchanged')}, removed {report.count('removed')}, "
                  f"skipped {report.count('skipped')}, failed {len(report.failed)}")
    return 1 if report.failed else 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    components = build(settings)
    return asyncio.run(_ask(components, args.question, args.json, args.debug))


async def _ask(components, question: str, as_json: bool, debug: bool, history: tuple[Message, ...] = ()) -> int:
    from rag.models import Turn

    answer = None
    error = ""
    streamed: list[str] = []
    async for event in components.pipeline.run(Turn(turn_id="cli", text=question, history=history)):
        if event.kind == AnswerEventKind.DELTA:
            streamed.append(event.text)
            if not as_json:
                out.print(event.text, end="")
        elif event.kind == AnswerEventKind.STATUS and not as_json:
            console.print(f"[dim]{event.text}[/dim]")
        elif event.kind == AnswerEventKind.ERROR:
            error = event.text
        elif event.kind == AnswerEventKind.DONE:
            answer = event.answer
    if answer is None:
        if as_json:
            # Text already streamed stays: the user of the JSON saw none of it, and it was right so far.
            shown = "".join(streamed).rstrip()
            print(json.dumps({"answer": f"{shown}\n\n{error}" if shown else error, "route": "error",
                              "citations": [], "followups": [],
                              "llm_calls": 0, "timings_ms": {}}, ensure_ascii=False))
        else:
            out.print(error)
        return 1
    if as_json:
        print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
        return 0
    out.print()
    if answer.citations:
        out.print("\n[bold]출처[/bold]")
        for c in answer.citations:
            out.print(f"  [{c.index}] {c.label}" + (f" — {c.url}" if c.url else ""))
    if answer.followups:
        out.print("\n[bold]이어서 물어볼 만한 질문[/bold]")
        for f in answer.followups:
            out.print(f"  • {f}")
    if debug:
        console.print(f"[dim]route={answer.route.value} llm_calls={answer.llm_calls} timings_ms={answer.timings_ms}")
        for note in answer.notes:
            console.print(f"[dim]  {note}")
    return 0


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    components = build(settings)
    history: list[Message] = []
    console.print("regbot — 규정에 대해 물어보세요. 끝내려면 Ctrl-D 또는 '/exit'.")
    while True:
        try:
            question = input("\n질문> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if question in ("/exit", "/quit"):
            break
        if not question:
            continue
        answer_holder: list[Answer] = []

        async def one(q: str = question, answer_holder: list[Answer] = answer_holder) -> None:
            from rag.models import Turn

            async for event in components.pipeline.run(Turn(turn_id="chat", text=q, history=tuple(history))):
                if event.kind == AnswerEventKind.DELTA:
                    out.print(event.text, end="")
                elif event.kind == AnswerEventKind.ERROR:
                    out.print(event.text)
                elif event.kind == AnswerEventKind.DONE and event.answer:
                    answer_holder.append(event.answer)

        asyncio.run(one())
        if answer_holder:
            history.extend([Message(role=Role.USER, content=question),
                            Message(role=Role.ASSISTANT, content=answer_holder[0].text)])
            for c in answer_holder[0].citations:
                out.print(f"  [{c.index}] {c.label}")
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    components = build(settings)
    hits = components.retriever.search_sync(args.query, k=args.k)
    rows = [{"doc": h.chunk.doc, "article": h.chunk.article, "title": h.chunk.title, "score": round(h.score, 6),
             "text": h.chunk.text, "chunk_id": h.chunk.chunk_id} for h in hits]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    table = Table(title=f"search: {args.query}")
    for column in ("#", "document", "article", "title", "score"):
        table.add_column(column)
    for i, row in enumerate(rows, 1):
        table.add_row(str(i), row["doc"], row["article"], row["title"], f"{row['score']:.4f}")
    out.print(table)
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from rag.eval import Evaluator, dumps, load_eval_file

    items = load_eval_file(Path(args.file))
    components = build(settings)
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
    table = Table(title=f"regbot eval {args.file}")
    metrics = list(result["metrics"])
    table.add_column("type")
    for m in metrics:
        table.add_column(m)
    for name, values in [("all", result["metrics"]), *result["by_type"].items()]:
        table.add_row(name, *["" if values[m] is None else str(values[m]) for m in metrics])
    out.print(table)
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from bot.logging_setup import configure_logging
    from bot.server import serve

    configure_logging(log_content=settings.log_content, level=logging.DEBUG if args.verbose else logging.INFO)

    return serve(settings)


def cmd_playground(args: argparse.Namespace, settings: Settings) -> int:
    """`regbot serve` with the web playground on, bound to this machine only; prints (and opens) its address."""
    import os
    import webbrowser

    from aiohttp import web

    from bot.server import build_runtime, create_app

    port = args.port if args.port is not None else settings.port
    settings = settings.model_copy(update={"playground": True, "host": "127.0.0.1", "port": port})
    components = build(settings)
    if not components.corpus.chunks:
        console.print("[yellow]색인이 비어 있어요. 먼저 `regbot ingest 규정폴더`를 실행해 주세요.[/yellow]")
    url = f"http://127.0.0.1:{port}/"

    def ready(_: str) -> None:  # run_app calls this once the port is listening
        out.print(f"regbot playground: {url}  (끝내려면 Ctrl-C)")
        # Without a display, webbrowser would start a text browser in this terminal: only print the address.
        if not args.no_browser and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                    or sys.platform in ("darwin", "win32")):
            webbrowser.open(url)

    web.run_app(create_app(build_runtime(settings, components)), host=settings.host, port=port, print=ready,
                shutdown_timeout=30)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="regbot", description="규정 안내 봇 regbot")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("ingest", help="index files or folders")
    s.add_argument("paths", nargs="+")
    s.add_argument("--collection", default="default")
    s.add_argument("--prune", action="store_true", help="remove indexed files that no longer exist")
    s.set_defaults(func=cmd_ingest)
    s = sub.add_parser("ask", help="answer one question")
    s.add_argument("question")
    s.add_argument("--json", action="store_true")
    s.add_argument("--debug", action="store_true", help="print route, timings and the flow log")
    s.set_defaults(func=cmd_ask)
    s = sub.add_parser("chat", help="interactive conversation")
    s.set_defaults(func=cmd_chat)
    s = sub.add_parser("search", help="retrieval only")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_search)
    s = sub.add_parser("eval", help="run an eval file and print metrics")
    s.add_argument("file")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_eval)
    s = sub.add_parser("serve", help="HTTP server for Slack, Teams, health and metrics")
    s.set_defaults(func=cmd_serve)
    s = sub.add_parser("playground", help="the web playground on 127.0.0.1 (opens a browser when there is one)")
    s.add_argument("--port", type=int, default=None, help="port (default: REGBOT_PORT or 3978)")
    s.add_argument("--no-browser", action="store_true", help="only print the address")
    s.set_defaults(func=cmd_playground)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    try:
        return args.func(args, settings)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
