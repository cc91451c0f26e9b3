"""Reading one file under a time limit: a crafted or pathological file is skipped, never an ingest that hangs.

    reader = TimedFileReader(loaders, parser, limit_s=120)
    loaded, parsed = reader.read(path)      # FileTookTooLong after 120 s; the work is stopped, not abandoned

A regex or a parser stuck inside C code cannot be interrupted in-process (neither a thread nor a signal handler
runs until it returns), so the file is loaded and parsed in a child process that is killed at the deadline.
Children come from a forkserver: it starts once, single-threaded, so a fork never copies the locks of Chroma's
or Kiwi's threads, and each file then costs a fork (a few milliseconds), not an interpreter start.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path

from rag.errors import IngestError
from rag.knowledge.loaders import LoaderRegistry
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.parser import ParsedDocument, RegulationParser

_PRELOAD = ["rag.knowledge.time_limit"]  # the loaders and the parser, imported once in the forkserver


class FileTookTooLong(IngestError):
    """Loading and parsing one file ran over the per-file time limit."""


def _load_and_parse(connection: Connection, loaders: LoaderRegistry, parser: RegulationParser, path: Path) -> None:
    try:
        loaded = loaders.load(path)
        result: object = ("ok", loaded, parser.parse(loaded, fallback_name=path.stem))
    except IngestError as exc:
        result = ("error", str(exc), "")
    except Exception as exc:  # the ingest report names the error class, as for an in-process failure
        result = ("unexpected", str(exc), type(exc).__name__)
    connection.send(result)
    connection.close()


class TimedFileReader:
    """Loads and parses each file in a child process killed after `limit_s` seconds.

    Args:
        loaders: the loader registry (sent to the child; a custom loader must be importable by name).
        parser: the regulation parser.
        limit_s: seconds one file may take to load and parse.
    """

    def __init__(self, loaders: LoaderRegistry, parser: RegulationParser, *, limit_s: float) -> None:
        if limit_s <= 0:
            raise ValueError("limit_s must be positive (REGBOT_INGEST_FILE_TIMEOUT_S; 0 turns the limit off)")
        self.limit_s = limit_s
        self._loaders = loaders
        self._parser = parser
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(_PRELOAD)

    def read(self, path: Path) -> tuple[LoadedDocument, ParsedDocument]:
        """The loaded and parsed file; IngestError when it cannot be read, FileTookTooLong past the limit."""
        receiver, sender = self._context.Pipe(duplex=False)
        child = self._context.Process(target=_load_and_parse, args=(sender, self._loaders, self._parser, path),
                                      name=f"regbot-read-{path.name}"[:60], daemon=True)
        child.start()
        sender.close()
        try:
            if not receiver.poll(self.limit_s):
                raise FileTookTooLong(
                    f"{path.name}: took too long to read (over {self.limit_s:g} s, REGBOT_INGEST_FILE_TIMEOUT_S)"
                )
            try:
                status, first, second = receiver.recv()
            except EOFError:  # the child died (out of memory, a crash in a native library)
                raise IngestError(f"{path.name}: the reader stopped before finishing (exit {child.exitcode})") \
                    from None
        finally:
            receiver.close()
            if child.is_alive():
                child.kill()
            child.join()
        if status == "ok":
            return first, second
        if status == "error":
            raise IngestError(first)
        raise IngestError(f"{path.name}: unexpected error ({second})")


__all__ = ["FileTookTooLong", "TimedFileReader"]
