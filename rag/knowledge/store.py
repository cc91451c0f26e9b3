"""The chunk store: SQLite in the data dir holding every chunk, its lexical tokens and the ingested files.

It is the source of truth for lookups and for the lexical index; Chroma holds the vectors.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

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
"""


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

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)
            # A random id born with the index: a rebuilt data dir restarts `version` at 1 but never this id.
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('index_id', ?)", (uuid4().hex,))

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

    def replace_file(self, record: FileRecord, chunks: list[Chunk], tokens: list[list[str]]) -> None:
        """Swap a file's chunks for new ones atomically (old rows go in the same transaction)."""
        with closing(self._connect()) as db, db:
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
            self._bump_version(db)

    def remove_files(self, records: Iterable[FileRecord]) -> None:
        with closing(self._connect()) as db, db:
            for record in records:
                db.execute("DELETE FROM chunks WHERE path = ? AND collection = ?", (record.path, record.collection))
                db.execute("DELETE FROM files WHERE path = ? AND collection = ?", (record.path, record.collection))
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
