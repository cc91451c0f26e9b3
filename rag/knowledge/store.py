"""The chunk store: SQLite in the data dir holding every chunk, its lexical tokens, the ingested files and every
version of each file's text (rag/knowledge/versions.py).

It is the source of truth for lookups and for the lexical index; Chroma holds the vectors. `chunks` hold the
version in force; `versions` hold each version's text per article, and a version still to come into force also
holds its chunks and tokens (`held`) until it is promoted.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

from rag.knowledge.versions import ArticleText, VersionRecord, article_texts, effective_date, timestamp_of
from rag.models import Chunk

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT NOT NULL,
    collection TEXT NOT NULL,
    doc TEXT NOT NULL,
    file_hash TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    PRIMARY KEY (path, collection)
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    collection TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    tokens TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (path, collection);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    path TEXT NOT NULL,
    collection TEXT NOT NULL,
    version INTEGER NOT NULL,
    doc TEXT NOT NULL,
    effective TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    state TEXT NOT NULL,
    articles TEXT NOT NULL,
    held TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (path, collection, version)
);
"""
# Data dirs made before versions were kept get their files' current text as version 1, once.
_VERSIONS_MIGRATION = "versions_backfilled"
_VERSION_COLUMNS = "path, collection, version, doc, effective, ingested_at, state, articles"


class FileRecord(BaseModel):
    """An ingested file: where it came from, which document it holds and its content hash."""

    model_config = ConfigDict(frozen=True)

    path: str
    collection: str
    doc: str
    file_hash: str
    chunk_count: int


class ChunkStore:
    """SQLite-backed chunks; each file's chunks are replaced in one transaction."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.clock = clock
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)
            # A random id born with the index: a rebuilt data dir restarts `version` at 1 but never this id.
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('index_id', ?)", (uuid4().hex,))
        self._backfill_versions()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def files(self, collection: str | None = None) -> list[FileRecord]:
        query = "SELECT path, collection, doc, file_hash, chunk_count FROM files"
        args: tuple = ()
        if collection is not None:
            query += " WHERE collection = ?"
            args = (collection,)
        with closing(self._connect()) as db:
            rows = db.execute(query, args).fetchall()
        return [FileRecord(path=r[0], collection=r[1], doc=r[2], file_hash=r[3], chunk_count=r[4]) for r in rows]

    def chunk_ids_of(self, path: str, collection: str) -> list[str]:
        with closing(self._connect()) as db:
            rows = db.execute("SELECT chunk_id FROM chunks WHERE path = ? AND collection = ?", (path, collection))
            return [r[0] for r in rows]

    def replace_file(self, record: FileRecord, chunks: list[Chunk], tokens: list[list[str]],
                     version: VersionRecord | None = None) -> None:
        """Swap a file's chunks for new ones atomically (old rows go in the same transaction); `version`, when the
        text changed, is recorded in force in the same transaction."""
        with closing(self._connect()) as db, db:
            self._write_chunks(db, record, chunks, tokens)
            if version is not None:
                self._put_version(db, version.model_copy(update={"state": "in_force"}))
            self._bump_version(db)

    def _write_chunks(self, db: sqlite3.Connection, record: FileRecord, chunks: list[Chunk],
                      tokens: list[list[str]]) -> None:
        db.execute("DELETE FROM chunks WHERE path = ? AND collection = ?", (record.path, record.collection))
        db.executemany(
            "INSERT OR REPLACE INTO chunks (chunk_id, path, collection, seq, data, tokens) VALUES (?,?,?,?,?,?)",
            [
                (c.chunk_id, record.path, record.collection, i, c.model_dump_json(),
                 json.dumps(t, ensure_ascii=False))
                for i, (c, t) in enumerate(zip(chunks, tokens, strict=True))
            ],
        )
        db.execute(
            "INSERT OR REPLACE INTO files (path, collection, doc, file_hash, chunk_count) VALUES (?,?,?,?,?)",
            (record.path, record.collection, record.doc, record.file_hash, record.chunk_count),
        )

    def remove_files(self, records: Iterable[FileRecord]) -> None:
        with closing(self._connect()) as db, db:
            for record in records:
                db.execute("DELETE FROM chunks WHERE path = ? AND collection = ?", (record.path, record.collection))
                db.execute("DELETE FROM files WHERE path = ? AND collection = ?", (record.path, record.collection))
                db.execute("DELETE FROM versions WHERE path = ? AND collection = ?", (record.path, record.collection))
            self._bump_version(db)

    def load(self, *, tokens: bool = True) -> tuple[list[Chunk], list[list[str]]]:
        """Every chunk in file order, with its lexical tokens (an empty list when `tokens` is False: a saved
        lexical index does not need them)."""
        column = "tokens" if tokens else "''"
        with closing(self._connect()) as db:
            rows = db.execute(f"SELECT data, {column} FROM chunks ORDER BY path, collection, seq").fetchall()
        return [Chunk.model_validate_json(r[0]) for r in rows], [json.loads(r[1]) for r in rows] if tokens else []

    def load_file(self, path: str, collection: str) -> tuple[list[Chunk], list[list[str]]]:
        """One file's chunks and tokens."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT data, tokens FROM chunks WHERE path = ? AND collection = ? ORDER BY seq",
                              (path, collection)).fetchall()
        return [Chunk.model_validate_json(r[0]) for r in rows], [json.loads(r[1]) for r in rows]

    def version(self) -> int:
        """A counter bumped by every write; caches keyed on it are invalidated by ingest."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return int(row[0]) if row else 0

    def identity(self) -> str:
        """`<index id>:<version>`: what answer caches are keyed on, unique across rebuilt data dirs."""
        with closing(self._connect()) as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('index_id', 'version')").fetchall())
        return f"{rows.get('index_id', '')}:{rows.get('version', '0')}"

    @staticmethod
    def _bump_version(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO meta (key, value) VALUES ('version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    # --- versions (rag/knowledge/versions.py) ---------------------------------------------------------------

    def versions(self, *, amended_only: bool = False) -> list[VersionRecord]:
        """Every stored version of every file (without held chunks), oldest first per file; `amended_only`: only
        files with two versions or more (the change log's need: a big index of first versions is not read)."""
        where = (" WHERE (path, collection) IN (SELECT path, collection FROM versions GROUP BY path, collection "
                 "HAVING COUNT(*) > 1)") if amended_only else ""
        with closing(self._connect()) as db:
            rows = db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions{where} "
                              "ORDER BY path, collection, version").fetchall()
        return [_version_of(row) for row in rows]

    def latest_version(self, path: str, collection: str) -> VersionRecord | None:
        """The newest version of a file, in force or held."""
        with closing(self._connect()) as db:
            row = db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions WHERE path = ? AND collection = ? "
                             "ORDER BY version DESC LIMIT 1", (path, collection)).fetchone()
        return _version_of(row) if row else None

    def hold_version(self, file_hash: str, version: VersionRecord, chunks: list[Chunk],
                     tokens: list[list[str]]) -> None:
        """Store a version that is not in force yet, with the chunks it will put in force; the live chunks stay.
        The file's hash moves on, so re-ingesting the same file is `unchanged`."""
        held = json.dumps({"chunks": [c.model_dump(mode="json") for c in chunks], "tokens": tokens},
                          ensure_ascii=False)
        with closing(self._connect()) as db, db:
            self._put_version(db, version.model_copy(update={"state": "pending"}), held=held)
            db.execute("UPDATE files SET file_hash = ? WHERE path = ? AND collection = ?",
                       (file_hash, version.path, version.collection))
            self._bump_version(db)

    def next_pending(self) -> str:
        """The earliest effective date a held version waits for, or ""."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT MIN(effective) FROM versions WHERE state = 'pending'").fetchone()
        return row[0] or ""

    def due_versions(self, today: str) -> list[tuple[VersionRecord, list[Chunk], list[list[str]]]]:
        """Per file, the newest held version whose effective date is `today` or earlier, with its chunks."""
        with closing(self._connect()) as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}, held FROM versions v WHERE state = 'pending' AND effective <= ? AND "
                "version = (SELECT MAX(version) FROM versions w WHERE w.path = v.path AND "
                "w.collection = v.collection AND w.state = 'pending' AND w.effective <= ?)", (today, today)).fetchall()
        due = []
        for row in rows:
            held = json.loads(row[8])
            due.append((_version_of(row[:8]), [Chunk.model_validate(c) for c in held["chunks"]], held["tokens"]))
        return due

    def promote(self, version: VersionRecord, chunks: list[Chunk], tokens: list[list[str]]) -> list[str]:
        """Put a held version in force: its chunks replace the file's; returns the chunk ids no longer used."""
        with closing(self._connect()) as db, db:
            row = db.execute("SELECT file_hash FROM files WHERE path = ? AND collection = ?",
                             (version.path, version.collection)).fetchone()
            old = {r[0] for r in db.execute("SELECT chunk_id FROM chunks WHERE path = ? AND collection = ?",
                                            (version.path, version.collection))}
            record = FileRecord(path=version.path, collection=version.collection, doc=version.doc,
                                file_hash=row[0] if row else "", chunk_count=len(chunks))
            self._write_chunks(db, record, chunks, tokens)
            self._put_version(db, version.model_copy(update={"state": "in_force"}))
            self._bump_version(db)
        return sorted(old - {c.chunk_id for c in chunks})

    def prune_versions(self, before: str) -> int:
        """Delete superseded versions ingested before `before` (YYYY-MM-DD); the one in force and held ones stay."""
        with closing(self._connect()) as db, db:
            count = db.execute("DELETE FROM versions WHERE state = 'superseded' AND ingested_at < ?",
                               (before,)).rowcount
            if count:
                self._bump_version(db)
        return count

    @staticmethod
    def _put_version(db: sqlite3.Connection, version: VersionRecord, *, held: str = "") -> None:
        """Write one version; a version coming into force supersedes every older one of its file."""
        db.execute(
            "INSERT OR REPLACE INTO versions (path, collection, version, doc, effective, ingested_at, state, articles, "
            "held) VALUES (?,?,?,?,?,?,?,?,?)",
            (version.path, version.collection, version.version, version.doc, version.effective,
             version.ingested_at, version.state, version.articles_json(), held))
        if version.state == "in_force":
            db.execute("UPDATE versions SET state = 'superseded', held = '' WHERE path = ? AND collection = ? AND "
                       "version < ? AND state IN ('in_force', 'pending')",
                       (version.path, version.collection, version.version))

    def _backfill_versions(self) -> None:
        """Migration: each file indexed before versions were kept gets its current text as version 1."""
        with closing(self._connect()) as db:
            if db.execute("SELECT 1 FROM meta WHERE key = ?", (_VERSIONS_MIGRATION,)).fetchone():
                return
        now = timestamp_of(self.clock)
        for record in self.files():
            if self.latest_version(record.path, record.collection) is not None:
                continue
            chunks, _ = self.load_file(record.path, record.collection)
            version = VersionRecord(path=record.path, collection=record.collection, version=1, doc=record.doc,
                                    effective=effective_date(chunks), ingested_at=now,
                                    articles=tuple(article_texts(chunks)))
            with closing(self._connect()) as db, db:
                self._put_version(db, version)
        with closing(self._connect()) as db, db:
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (_VERSIONS_MIGRATION, now))


def _version_of(row: tuple) -> VersionRecord:
    return VersionRecord(path=row[0], collection=row[1], version=row[2], doc=row[3], effective=row[4],
                         ingested_at=row[5], state=row[6],
                         articles=tuple(ArticleText.model_validate(a) for a in json.loads(row[7])))
