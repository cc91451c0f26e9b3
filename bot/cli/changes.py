"""`regbot changes [--since DATE] [--doc NAME] [--json] [--prune-before DATE]`: article-level changes between the
ingested versions of each regulation (DESIGN.md §3; docs/versions.md).

Reads the chunk store of the data dir without loading Kiwi or the indexes; never creates a data dir. The terminal
form is a word diff: removed words as [-…-] (red), added ones as {+…+} (green), so it reads in a pipe too.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date

from rich.console import Console
from rich.text import Text

from bot.config import Settings
from rag.knowledge.store import ChunkStore
from rag.knowledge.versions import ArticleChange, ChangeLog, DocumentChange, paragraphs_of, word_diff
from rag.models import CIRCLED, paragraph_marker
from rag.text import doc_key

EXIT_OK, EXIT_INPUT, EXIT_NO_INDEX = 0, 2, 3
NO_CHANGES = "no changes recorded{where}: a re-ingest whose text differs records a version (docs/versions.md)"
PRUNED = "pruned {count} superseded version(s) ingested before {before}"
_STYLES = {"same": "", "removed": "red strike", "added": "green bold"}
_MARKS = {"same": ("", ""), "removed": ("[-", "-]"), "added": ("{+", "+}")}
_SIGNS = {"changed": "~", "added": "+", "removed": "-"}


def add_changes_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", type=iso_day, metavar="DATE", default=None,
                   help="only changes effective or ingested on or after DATE (YYYY-MM-DD)")
    p.add_argument("--doc", metavar="NAME", default="", help="only this regulation (its title; spaces ignored)")
    p.add_argument("--json", action="store_true", help="print one JSON object (DESIGN.md §3 shape)")
    p.add_argument("--prune-before", type=iso_day, metavar="DATE", default=None,
                   help="delete superseded versions ingested before DATE (the version in force and held ones stay)")


def iso_day(text: str) -> str:
    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {text!r}") from None


def cmd_changes(args: argparse.Namespace, settings: Settings) -> int:
    """The `changes` command: list (or prune) the recorded versions' changes."""
    index = settings.data_dir / "index.sqlite"
    if not index.is_file():
        _error(f"no index in {settings.data_dir}: run `regbot ingest FOLDER` first")
        return EXIT_NO_INDEX
    store = ChunkStore(index)
    out = Console(soft_wrap=True, highlight=False)
    if args.prune_before:
        count = store.prune_versions(args.prune_before)
        out.print(PRUNED.format(count=count, before=args.prune_before), markup=False)
        return EXIT_OK
    changes = ChangeLog(store).changes(since=args.since or "")
    if args.doc:
        wanted = doc_key(args.doc)
        changes = [c for c in changes if doc_key(c.doc) == wanted]
    if args.json:
        sys.stdout.write(json.dumps({"changes": [c.as_json() for c in changes]}, ensure_ascii=False) + "\n")
        return EXIT_OK
    if not changes:
        where = "".join([f" for {args.doc}" if args.doc else "", f" since {args.since}" if args.since else ""])
        out.print(NO_CHANGES.format(where=where), markup=False)
        return EXIT_OK
    for change in changes:
        for line in render_change(change):
            out.print(line)
    return EXIT_OK


def render_change(change: DocumentChange) -> list[Text]:
    """One document's change as terminal lines: a heading, then each article with its words diffed."""
    when = f"{change.effective}부터 시행 예정" if change.state == "pending" else f"시행 {change.dated}"
    head = Text.assemble((change.doc, "bold"), f"  v{change.from_version} → v{change.to_version}  {when}",
                         (f"  (ingested {change.ingested_at})", "dim"))
    lines = [Text(""), head]
    for article in change.articles:
        lines.append(Text.assemble(f"  {_SIGNS[article.change]} ", (article.what, "bold"), f"  {article.change}"))
        lines.extend(Text.assemble("      ", *diff) for diff in _article_diff(article))
    return lines


def _article_diff(article: ArticleChange) -> list[list[tuple[str, str]]]:
    """The article's text as diffed lines: only the changed 항 of a changed article, all of an added/removed one."""
    before, after = article.before.partition("\n")[2], article.after.partition("\n")[2]
    if article.change == "changed" and article.paragraphs:
        wanted = {paragraph_marker(int(p[1:-1])) for p in article.paragraphs}
        old = dict(p for p in paragraphs_of(before) if p[0] in wanted)
        new = dict(p for p in paragraphs_of(after) if p[0] in wanted)
        pairs = [(old.get(m, ""), new.get(m, "")) for m in sorted(wanted, key=CIRCLED.index)]
    else:
        pairs = [(before, after)]
    lines = []
    for old_text, new_text in pairs:
        line: list[tuple[str, str]] = []
        for kind, words in word_diff(old_text, new_text):
            start, end = _MARKS[kind]
            if line:
                line.append((" ", ""))
            line.append((f"{start}{words}{end}", _STYLES[kind]))
        lines.append(line)
    return lines


def _error(message: str) -> None:
    sys.stderr.write(f"regbot: {message}\n")


__all__ = ["add_changes_arguments", "cmd_changes", "render_change"]
