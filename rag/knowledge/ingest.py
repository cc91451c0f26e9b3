"""Incremental ingest: load → parse → chunk → tokenise → embed what changed → swap into the store."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rag.errors import IngestError, RetrievalUnavailable
from rag.knowledge.chunker import ArticleChunker
from rag.knowledge.loaders import LoaderRegistry
from rag.knowledge.parser import RegulationParser
from rag.knowledge.store import ChunkStore, FileRecord
from rag.knowledge.time_limit import FileTookTooLong, TimedFileReader
from rag.knowledge.versions import (
    VersionRecord,
    article_texts,
    effective_date,
    promote_due_versions,
    same_text,
    timestamp_of,
    today_of,
)
from rag.retrieval.corpus import lexical_tokens
from rag.retrieval.dense import DenseIndex
from rag.retrieval.tokenizer import Tokenizer

log = logging.getLogger(__name__)

# Repository housekeeping files that sit beside regulations in a folder and are not regulations.
_NOT_REGULATIONS = {"readme", "sources", "license", "changelog", "contributing"}
# Bump when parsing or chunking changes, so unchanged files are re-chunked once.
CHUNKING_VERSION = "6"  # 5: plain-text packing; 6: markup remnants stripped from chunk text


class FileOutcome(BaseModel):
    """What ingest did with one file."""

    model_config = ConfigDict(frozen=True)

    path: str
    status: Literal["added", "updated", "unchanged", "removed", "skipped", "failed"]
    doc: str = ""
    chunks: int = 0
    embedded: int = 0
    reason: str = ""  # why it failed or was skipped, or what a best-effort loader could not read


class IngestReport(BaseModel):
    """Every file's outcome; `failed` says whether the exit status should be non-zero."""

    outcomes: list[FileOutcome]
    seconds: float = 0.0

    @property
    def failed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


ProgressCallback = Callable[[str, int], None]  # (file name, files done so far)
# (file name, phase "tokenising" | "embedding", chunks done, chunks in the file): a big file takes minutes.
FileProgressCallback = Callable[[str, str, int, int], None]
# Chunks tokenised between two progress reports (Kiwi runs ~2,000 chunks a second here).
_TOKEN_BATCH = 512
_HASH_BLOCK = 1 << 20


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes and CHUNKING_VERSION, read in blocks (the file is not held twice)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    digest.update(CHUNKING_VERSION.encode())
    return digest.hexdigest()


def human_size(size: int) -> str:
    """`5.2 MB`, `830.0 KB`."""
    return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{size / 1_000:.1f} KB"


def discover_files(paths: Iterable[Path], registry: LoaderRegistry) -> tuple[list[Path], list[FileOutcome]]:
    """Files to ingest, and the ones passed over (unsupported or housekeeping) with a reason."""
    found: list[Path] = []
    passed: list[FileOutcome] = []
    for path in paths:
        if path.is_file():
            found.append(path)
            continue
        if not path.exists():
            passed.append(FileOutcome(path=str(path), status="failed", reason="no such file or folder"))
            continue
        for child in sorted(path.rglob("*")):
            if not child.is_file() or any(part.startswith(".") for part in child.relative_to(path).parts):
                continue
            if child.stem.lower() in _NOT_REGULATIONS:
                passed.append(FileOutcome(path=str(child), status="skipped",
                                          reason="not a regulation (housekeeping file)"))
            elif registry.supports(child):
                found.append(child)
            else:
                passed.append(FileOutcome(path=str(child), status="skipped",
                                          reason=f"unsupported format {child.suffix}"))
    return found, passed


class Ingestor:
    """Indexes files into the chunk store and the dense index; unchanged files are not touched."""

    def __init__(self, store: ChunkStore, dense: DenseIndex | None, tokenizer: Tokenizer, *,
                 loaders: LoaderRegistry | None = None, parser: RegulationParser | None = None,
                 chunker: ArticleChunker | None = None, max_file_bytes: int | None = None,
                 clock: Callable[[], float] = time.time, file_time_limit_s: float | None = None) -> None:
        if max_file_bytes is not None and max_file_bytes < 1:
            raise ValueError("max_file_bytes must be positive (None: no limit)")
        self.max_file_bytes = max_file_bytes
        self._file_progress: FileProgressCallback | None = None
        self.store = store
        self.dense = dense
        self.tokenizer = tokenizer
        self.loaders = loaders or LoaderRegistry()
        self.parser = parser or RegulationParser()
        self.chunker = chunker or ArticleChunker()
        self.clock = clock  # epoch seconds: when a version was ingested, and which versions are in force today
        # With a limit, each file is read in a child process killed at the deadline (a crafted file is skipped).
        self._timed = TimedFileReader(self.loaders, self.parser, limit_s=file_time_limit_s) \
            if file_time_limit_s else None

    def ingest(self, paths: Iterable[Path], *, collection: str = "default", prune: bool = False,
               progress: ProgressCallback | None = None,
               file_progress: FileProgressCallback | None = None) -> IngestReport:
        """Index `paths`; `progress` hears of each file done, `file_progress` of the chunks inside a file."""
        started = time.perf_counter()
        self._file_progress = file_progress
        files, outcomes = discover_files(paths, self.loaders)
        self._promote_due()
        known = {r.path: r for r in self.store.files(collection)}
        seen: set[str] = set()
        for done, path in enumerate(files, start=1):
            key = str(path.resolve())
            seen.add(key)
            outcomes.append(self._ingest_file(path, key, collection, known.get(key)))
            if progress:
                progress(path.name, done)
        if prune:
            gone = [r for p, r in known.items() if p not in seen and not Path(p).exists()]
            for record in gone:
                ids = self.store.chunk_ids_of(record.path, collection)
                self.store.remove_files([record])
                if self.dense is not None:
                    self.dense.delete(ids)
                outcomes.append(FileOutcome(path=record.path, status="removed", doc=record.doc))
        return IngestReport(outcomes=outcomes, seconds=time.perf_counter() - started)

    def _ingest_file(self, path: Path, key: str, collection: str, previous: FileRecord | None) -> FileOutcome:
        try:
            size = path.stat().st_size
            if self.max_file_bytes is not None and size > self.max_file_bytes:
                return FileOutcome(path=str(path), status="skipped",
                                   reason=f"too large: {human_size(size)}, over the limit of "
                                          f"{human_size(self.max_file_bytes)} per file")
            digest = file_hash(path)
        except OSError as exc:
            return FileOutcome(path=str(path), status="failed", reason=f"cannot be read ({exc.strerror})")
        if previous is not None and previous.file_hash == digest:
            return FileOutcome(path=str(path), status="unchanged", doc=previous.doc, chunks=previous.chunk_count)
        try:
            if self._timed is not None:
                loaded, parsed = self._timed.read(path)
            else:
                loaded = self.loaders.load(path)
                parsed = self.parser.parse(loaded, fallback_name=path.stem)
            chunks = self.chunker.chunk(parsed, collection=collection, source_path=key)
            if not chunks:
                raise IngestError(f"{path.name}: no text found")
            tokens = self._tokens(chunks, path.name)
            version = self._next_version(key, collection, parsed.doc, chunks)
            if version is not None and version.effective > today_of(self.clock):
                return self._hold(path, digest, version, chunks, tokens)
            embedded = self._embed_changed(chunks, key, collection, path.name)
            old_ids = set(self.store.chunk_ids_of(key, collection))
            record = FileRecord(path=key, collection=collection, doc=parsed.doc, file_hash=digest,
                                chunk_count=len(chunks))
            # New vectors are written first; the old ones go only after the store points at the new chunks.
            self.store.replace_file(record, chunks, tokens, version=version)
            stale = old_ids - {c.chunk_id for c in chunks}
            if stale and self.dense is not None:
                self.dense.delete(sorted(stale))
        except FileTookTooLong as exc:
            return FileOutcome(path=str(path), status="skipped", reason=str(exc).removeprefix(f"{path.name}: "))
        except IngestError as exc:
            log.info("ingest failed for %s: %s", path, exc)  # the report says it; a warning would say it twice
            return FileOutcome(path=str(path), status="failed", reason=str(exc))
        except RetrievalUnavailable as exc:
            return FileOutcome(path=str(path), status="failed", reason=f"dense index unavailable: {exc}")
        except Exception as exc:  # a parser or library bug must not stop the batch
            log.info("unexpected error ingesting %s", path, exc_info=True)  # the report names it; -v shows where
            return FileOutcome(path=str(path), status="failed", reason=f"unexpected error ({exc.__class__.__name__})")
        status = "updated" if previous is not None else "added"
        return FileOutcome(path=str(path), status=status, doc=parsed.doc, chunks=len(chunks), embedded=embedded,
                           reason="; ".join(loaded.warnings))

    def _promote_due(self) -> None:
        """Put in force the held versions whose date has come; if the dense index cannot take their vectors they
        stay held (the next ingest, start-up or answer retries), and the ingest goes on."""
        try:
            promote_due_versions(self.store, self.dense, today_of(self.clock))
        except RetrievalUnavailable as exc:
            log.warning("held versions stay held until the dense index is reachable: %s", exc)

    def _next_version(self, key: str, collection: str, doc: str, chunks: list) -> VersionRecord | None:
        """The version this text makes, or None when it says what the newest stored version says (an unchanged
        re-ingest records nothing). A held version re-ingested with the same text keeps its number and takes the
        new effective date."""
        latest = self.store.latest_version(key, collection)
        articles = tuple(article_texts(chunks))
        effective = effective_date(chunks)
        if latest is not None and same_text(latest.articles, articles):
            return latest.model_copy(update={"effective": effective}) if latest.state == "pending" else None
        return VersionRecord(path=key, collection=collection, version=latest.version + 1 if latest else 1, doc=doc,
                             effective=effective, ingested_at=timestamp_of(self.clock), articles=articles)

    def _hold(self, path: Path, digest: str, version: VersionRecord, chunks: list, tokens: list) -> FileOutcome:
        """A version whose effective date is ahead is stored, not indexed: the text in force stays until then."""
        self.store.hold_version(digest, version, chunks, tokens)
        return FileOutcome(path=str(path), status="updated", doc=version.doc, chunks=len(chunks),
                           reason=f"held: in force from {version.effective} (version {version.version})")

    def _tokens(self, chunks: list, name: str) -> list[list[str]]:
        """Lexical tokens, in batches so a big file reports its progress."""
        tokens: list[list[str]] = []
        for start in range(0, len(chunks), _TOKEN_BATCH):
            tokens.extend(lexical_tokens(self.tokenizer, chunks[start : start + _TOKEN_BATCH]))
            if self._file_progress:
                self._file_progress(name, "tokenising", len(tokens), len(chunks))
        return tokens

    def _embed_changed(self, chunks, key: str, collection: str, name: str) -> int:
        """Embed only chunks whose id is new or whose text changed since the last ingest."""
        if self.dense is None:
            return 0
        previous, _ = self.store.load_file(key, collection)
        unchanged = {c.chunk_id for c in previous if c.content_hash}
        hashes = {c.chunk_id: c.content_hash for c in previous}
        present = self.dense.existing_ids([c.chunk_id for c in chunks if c.chunk_id in unchanged])
        todo = [c for c in chunks if not (c.chunk_id in present and hashes.get(c.chunk_id) == c.content_hash)]
        done = 0

        def embedded(count: int) -> None:
            nonlocal done
            done += count
            if self._file_progress:
                self._file_progress(name, "embedding", done, len(todo))

        self.dense.upsert(todo, progress=embedded)
        return len(todo)
