"""What every `regbot` command shares: exit codes, the two consoles, `CliError`, and the checks that come before
an answer (the index exists, the question can be asked)."""

from __future__ import annotations

import argparse
import sqlite3
from contextlib import closing
from pathlib import Path

from rich.console import Console

from bot.config import Settings
from rag.text import normalize_text, question_problem

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_NO_INDEX, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# The CLI's own words; what an answer says comes from rag/messages.py.
LOADING = "규정 색인을 불러오는 중…"


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


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value
