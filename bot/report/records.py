"""Turn records: one small, privacy-preserving record per turn the service handles, and the feedback on it.

`bot.report.recorder.TurnRecorder` writes them in the background, off the answer path.

Stored where state lives: Redis when `REDIS_URL` is set (two sorted sets scored by time, so `regbot report` and
every replica read the same records), else `records.sqlite` in the data dir (WAL, readable while `serve` writes).

Privacy (the default, `REGBOT_KEEP_QUESTIONS` off): a record holds no question or answer text. Workspace, channel,
user and conversation are salted HMACs (the salt is random per installation and kept beside the records, so the
ids cannot be looked up in a table made elsewhere). For a refused question only its common nouns are kept (Kiwi
NNG, two characters or more, deduplicated and sorted, at most six; never proper nouns, numbers or foreign
words): enough to group refusals into themes ("what the rules don't cover"), not enough to read the question
back. With the opt-in, the question and the answer are kept truncated. Feedback comments follow the same rule.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rag.models import Answer, Outcome, Route

if TYPE_CHECKING:
    from bot.config import Settings

logger = logging.getLogger(__name__)

SQLITE_FILE = "records.sqlite"
REDIS_PREFIX = "regbot:records:"
# The capped vote list earlier releases kept beside the state keys: no TTL, raw ids. Nothing reads it now; any
# purge deletes it so that `--purge --all` leaves no vote behind on an upgraded installation.
LEGACY_FEEDBACK_KEY = "regbot:feedback"


class CitedArticle(BaseModel):
    """A document and article an answer cited."""

    model_config = ConfigDict(frozen=True)

    doc: str
    article: str = ""


class TurnRecord(BaseModel):
    """What one turn was, without what was said (unless the operator opted in)."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    at: float  # epoch seconds when the turn began
    platform: str
    workspace: str = ""  # salted hash
    channel: str = ""  # salted hash
    user: str = ""  # salted hash
    conversation: str = ""  # salted hash of the conversation key, to join feedback that names no turn
    route: str = ""  # chitchat | lookup | search; "" when no answer was made
    outcome: str  # see `turn_outcome`
    citations: tuple[CitedArticle, ...] = ()
    collections: tuple[str, ...] = ()
    latency_ms: float = 0.0
    llm_calls: int = 0
    llm_tokens: int | None = None  # None: the answer does not report tokens
    cache_hit: bool = False
    question_chars: int = 0
    language: str = ""  # ko | en | vi, from the question's letters (rag/lang); "" in records written before
    topic_nouns: tuple[str, ...] = ()  # refused questions only
    question: str = ""  # REGBOT_KEEP_QUESTIONS only, truncated
    answer: str = ""  # REGBOT_KEEP_QUESTIONS only, truncated


class FeedbackRecord(BaseModel):
    """A 👍/👎, joined to its turn by `turn_id` (or, without one, to the conversation's latest turn)."""

    model_config = ConfigDict(frozen=True)

    at: float
    platform: str
    rating: Literal["up", "down"]
    turn_id: str = ""
    conversation: str = ""  # salted hash
    user: str = ""  # salted hash
    comment: str = ""  # REGBOT_KEEP_QUESTIONS only, truncated


def turn_outcome(service_outcome: str, answer: Answer | None) -> str:
    """The report's outcome for how the service ended a turn.

    A finished answer is `small_talk` (chitchat route), `not_covered` (the pipeline found nothing that answers:
    `Answer.grounded` is False), `hedged` (the closest article quoted as such) or `answered`. A pipeline error event
    or an internal failure is `error`; every other service outcome (`rate_limited`, `invalid`, `busy`, `timeout`,
    `abandoned`) keeps its own name.
    """
    if service_outcome == "answered" and answer is not None:
        if answer.route == Route.CHITCHAT:
            return "small_talk"
        if answer.outcome == Outcome.HEDGED:
            return "hedged"
        return "answered" if answer.grounded else "not_covered"
    if service_outcome in ("failed", "error"):
        return "error"
    return service_outcome


# --- stores ---------------------------------------------------------------------------------------------------


class RecordStore(Protocol):
    """Where records live; every method may raise (the recorder logs and drops, the report shows the error)."""

    async def salt(self) -> str:
        """This installation's hashing salt, created on first use."""
        ...

    async def write(self, turns: Sequence[TurnRecord], feedback: Sequence[FeedbackRecord]) -> None: ...

    async def turns(self, since: float) -> list[TurnRecord]: ...

    async def feedback(self, since: float) -> list[FeedbackRecord]: ...

    async def purge(self, before: float | None) -> int:
        """Delete records older than `before` (every record when None); how many were deleted."""
        ...

    async def close(self) -> None: ...


class SqliteRecordStore:
    """Records in one SQLite file (WAL), for a server without Redis; `regbot report` reads it while it runs.

    With `create=False` (the report), a missing file reads as no records and is never created.
    """

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self._create = create
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None:
            return self._db
        if not self._create and not self.path.exists():
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may lose the last records
        db.executescript(
            """
            CREATE TABLE IF NOT EXISTS turns (turn_id TEXT PRIMARY KEY, at REAL NOT NULL, record TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS turns_at ON turns (at);
            CREATE TABLE IF NOT EXISTS feedback (id INTEGER PRIMARY KEY, at REAL NOT NULL, record TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS feedback_at ON feedback (at);
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """
        )
        self._db = db
        return db

    def _salt(self) -> str:
        with self._lock:
            db = self._connect()
            assert db is not None  # the writer always creates
            with db:
                db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('salt', ?)", (secrets.token_hex(16),))
            return str(db.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()[0])

    def _write(self, turns: Sequence[TurnRecord], feedback: Sequence[FeedbackRecord]) -> None:
        with self._lock:
            db = self._connect()
            assert db is not None
            with db:
                db.executemany("INSERT OR REPLACE INTO turns (turn_id, at, record) VALUES (?, ?, ?)",
                               [(t.turn_id, t.at, t.model_dump_json()) for t in turns])
                db.executemany("INSERT INTO feedback (at, record) VALUES (?, ?)",
                               [(f.at, f.model_dump_json()) for f in feedback])

    def _rows(self, table: str, since: float) -> list[str]:
        with self._lock:
            db = self._connect()
            if db is None:
                return []
            return [row[0] for row in db.execute(f"SELECT record FROM {table} WHERE at >= ? ORDER BY at", (since,))]

    def _purge(self, before: float | None) -> int:
        with self._lock:
            db = self._connect()
            if db is None:
                return 0
            cutoff = float("inf") if before is None else before
            with db:
                deleted = db.execute("DELETE FROM turns WHERE at < ?", (cutoff,)).rowcount
                deleted += db.execute("DELETE FROM feedback WHERE at < ?", (cutoff,)).rowcount
            if before is None:
                db.execute("VACUUM")  # deleted text must not linger in free pages
            return deleted

    async def salt(self) -> str:
        return await asyncio.to_thread(self._salt)

    async def write(self, turns: Sequence[TurnRecord], feedback: Sequence[FeedbackRecord]) -> None:
        await asyncio.to_thread(self._write, turns, feedback)

    async def turns(self, since: float) -> list[TurnRecord]:
        return _parse(TurnRecord, await asyncio.to_thread(self._rows, "turns", since))

    async def feedback(self, since: float) -> list[FeedbackRecord]:
        return _parse(FeedbackRecord, await asyncio.to_thread(self._rows, "feedback", since))

    async def purge(self, before: float | None) -> int:
        return await asyncio.to_thread(self._purge, before)

    async def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class RedisRecordStore:
    """Records in Redis: `{prefix}turns` and `{prefix}feedback` sorted sets (JSON members scored by time)."""

    def __init__(self, client: object, *, prefix: str = REDIS_PREFIX) -> None:
        from redis.asyncio import Redis

        assert isinstance(client, Redis)
        self._redis = client
        self.turns_key = f"{prefix}turns"
        self.feedback_key = f"{prefix}feedback"
        self.salt_key = f"{prefix}salt"

    @classmethod
    def from_url(cls, url: str) -> RedisRecordStore:
        from redis.asyncio import Redis

        # Short timeouts: a record is worth less than a connection held during an outage.
        client = Redis.from_url(url, decode_responses=True, socket_timeout=1.0, socket_connect_timeout=0.5)
        return cls(client)

    async def salt(self) -> str:
        await self._redis.set(self.salt_key, secrets.token_hex(16), nx=True)
        return str(await self._redis.get(self.salt_key))

    async def write(self, turns: Sequence[TurnRecord], feedback: Sequence[FeedbackRecord]) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            if turns:
                pipe.zadd(self.turns_key, {t.model_dump_json(): t.at for t in turns})
            if feedback:
                pipe.zadd(self.feedback_key, {f.model_dump_json(): f.at for f in feedback})
            await pipe.execute()

    async def turns(self, since: float) -> list[TurnRecord]:
        return _parse(TurnRecord, await self._redis.zrangebyscore(self.turns_key, since, "+inf"))

    async def feedback(self, since: float) -> list[FeedbackRecord]:
        return _parse(FeedbackRecord, await self._redis.zrangebyscore(self.feedback_key, since, "+inf"))

    async def purge(self, before: float | None) -> int:
        deleted = int(await self._redis.llen(LEGACY_FEEDBACK_KEY))
        await self._redis.delete(LEGACY_FEEDBACK_KEY)
        if before is None:
            deleted += await self._redis.zcard(self.turns_key) + await self._redis.zcard(self.feedback_key)
            await self._redis.delete(self.turns_key, self.feedback_key)
            return int(deleted)
        for key in (self.turns_key, self.feedback_key):
            deleted += int(await self._redis.zremrangebyscore(key, "-inf", f"({before}"))
        return deleted

    async def close(self) -> None:
        await self._redis.aclose()


R = TypeVar("R", bound=BaseModel)


def _parse(model: type[R], rows: Sequence[str]) -> list[R]:
    parsed: list[R] = []
    for row in rows:
        try:
            parsed.append(model.model_validate_json(row))
        except ValidationError:
            logger.warning("skipping an unreadable %s record", model.__name__)
    return parsed


def open_record_store(settings: Settings, *, create: bool = True) -> RecordStore:
    """The store `serve` writes and `regbot report` reads: Redis when REDIS_URL is set, else the data dir."""
    if settings.redis_url:
        return RedisRecordStore.from_url(settings.redis_url)
    return SqliteRecordStore(settings.data_dir / SQLITE_FILE, create=create)


__all__ = [
    "CitedArticle",
    "FeedbackRecord",
    "RecordStore",
    "RedisRecordStore",
    "SqliteRecordStore",
    "TurnRecord",
    "open_record_store",
    "turn_outcome",
]
