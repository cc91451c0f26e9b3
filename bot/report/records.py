"""Turn records: one small, privacy-preserving record per turn the service handles, and the feedback on it.

    recorder = build_recorder(settings, components)     # None when REGBOT_RECORDS_DAYS=0
    recorder.turn_ended(turn, platform=..., outcome=..., answer=..., latency_s=..., at=...)   # never blocks
    recorder.feedback_given(feedback, at=...)
    await recorder.close()                               # flushes what is queued (bounded)

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
import hashlib
import hmac
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from adapters.base import Feedback
from bot.report.themes import TopicNouns
from rag.lang import detect_language
from rag.models import Answer, Outcome, Route, Turn

if TYPE_CHECKING:
    from bot.app import Components
    from bot.config import Settings

logger = logging.getLogger(__name__)

QUESTION_KEEP_CHARS = 300
ANSWER_KEEP_CHARS = 600
SQLITE_FILE = "records.sqlite"
REDIS_PREFIX = "regbot:records:"
# The capped vote list earlier releases kept beside the state keys: no TTL, raw ids. Nothing reads it now; any
# purge deletes it so that `--purge --all` leaves no vote behind on an upgraded installation.
LEGACY_FEEDBACK_KEY = "regbot:feedback"
_DAY_S = 86400.0


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


# --- the recorder -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _EndedTurn:
    turn: Turn
    platform: str
    outcome: str
    answer: Answer | None
    latency_s: float
    at: float


@dataclass(frozen=True, slots=True)
class _GivenFeedback:
    feedback: Feedback
    at: float


class TurnRecorder:
    """Writes turn and feedback records in the background: a bounded queue, batched writes, errors logged.

    `turn_ended` and `feedback_given` only enqueue (a full queue drops the record and counts it), so a slow or
    absent store never delays or fails an answer. Hashing, noun extraction and the write run in the worker.

    Args:
        store: where records go.
        keep_questions: keep question, answer and comment text (truncated); off by default.
        retention_days: records older than this are deleted (at start and about hourly).
        topic_nouns: extracts the nouns of refused questions; None keeps no nouns (no themes).
        clock: epoch seconds (injectable).
        max_pending: queue bound.
        batch_size / linger_s: at most this many records a write, gathered for this long after the first.
    """

    def __init__(
        self,
        store: RecordStore,
        *,
        keep_questions: bool = False,
        retention_days: float = 90.0,
        topic_nouns: TopicNouns | None = None,
        clock: Callable[[], float] = time.time,
        max_pending: int = 10_000,
        batch_size: int = 200,
        linger_s: float = 0.05,
    ) -> None:
        if max_pending < 1 or batch_size < 1:
            raise ValueError("max_pending and batch_size must be at least 1")
        self.store = store
        self._keep_questions = keep_questions
        self._retention_s = retention_days * _DAY_S
        self._topic_nouns = topic_nouns
        self._clock = clock
        self._batch_size = batch_size
        self._linger_s = linger_s
        self._queue: asyncio.Queue[_EndedTurn | _GivenFeedback] = asyncio.Queue(maxsize=max_pending)
        self._worker: asyncio.Task[None] | None = None
        self._salt: str | None = None
        self._next_purge = 0.0
        self.dropped = 0  # records lost to a full queue or a failed write
        self.written = 0

    # --- the two hooks (called on the answer path: enqueue only) ----------------------------------------------

    def turn_ended(self, turn: Turn, *, platform: str, outcome: str, answer: Answer | None, latency_s: float,
                   at: float) -> None:
        """Queue the record of a finished turn."""
        self._enqueue(_EndedTurn(turn=turn, platform=platform, outcome=outcome, answer=answer,
                                                 latency_s=latency_s, at=at))

    def feedback_given(self, feedback: Feedback, *, at: float) -> None:
        """Queue a 👍/👎."""
        self._enqueue(_GivenFeedback(feedback=feedback, at=at))

    def _enqueue(self, item: _EndedTurn | _GivenFeedback) -> None:
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                logger.warning("turn records: queue full, %d records dropped so far", self.dropped)
            return
        if self._worker is None or self._worker.done():
            try:
                self._worker = asyncio.get_running_loop().create_task(self._run(), name="turn-records")
            except RuntimeError:  # no running loop (an answer closed at interpreter exit): nothing can write it
                self.dropped += 1

    # --- the worker -------------------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            if self._linger_s > 0:
                # Let a burst gather: one transaction and one thread hop for many turns, after their answers.
                await asyncio.sleep(self._linger_s)
            while len(batch) < self._batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await self._write(batch)
                self.written += len(batch)
            except Exception as exc:  # a store outage must not end the worker; the payload is never logged
                self.dropped += len(batch)
                logger.warning("turn records: %d records not written: %s", len(batch), exc.__class__.__name__)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _write(self, batch: list[_EndedTurn | _GivenFeedback]) -> None:
        if self._salt is None:
            self._salt = await self.store.salt()
        if self._topic_nouns is not None and any(self._needs_nouns(item) for item in batch):
            turns, feedback = await asyncio.to_thread(self._build, batch, self._salt)  # Kiwi: off the loop
        else:
            turns, feedback = self._build(batch, self._salt)  # tens of microseconds a record
        await self.store.write(turns, feedback)
        now = self._clock()
        if self._retention_s > 0 and now >= self._next_purge:
            self._next_purge = now + 3600.0
            await self.store.purge(now - self._retention_s)

    @staticmethod
    def _needs_nouns(item: _EndedTurn | _GivenFeedback) -> bool:
        return isinstance(item, _EndedTurn) and turn_outcome(item.outcome, item.answer) == "not_covered"

    def _build(self, batch: Sequence[_EndedTurn | _GivenFeedback],
               salt: str) -> tuple[list[TurnRecord], list[FeedbackRecord]]:
        turns: list[TurnRecord] = []
        feedback: list[FeedbackRecord] = []
        for item in batch:
            if isinstance(item, _EndedTurn):
                turns.append(self._turn_record(item, salt))
            else:
                feedback.append(self._feedback_record(item, salt))
        return turns, feedback

    def _turn_record(self, ended: _EndedTurn, salt: str) -> TurnRecord:
        turn, answer = ended.turn, ended.answer
        workspace, channel = _workspace_and_channel(turn.conversation_key)
        outcome = turn_outcome(ended.outcome, answer)
        cited = tuple(dict.fromkeys(CitedArticle(doc=c.doc, article=c.article) for c in answer.citations)) \
            if answer else ()
        nouns: tuple[str, ...] = ()
        if outcome == "not_covered" and self._topic_nouns is not None:
            nouns = self._topic_nouns.nouns(turn.text)
        return TurnRecord(
            turn_id=turn.turn_id,
            at=ended.at,
            platform=ended.platform,
            workspace=_hash(salt, workspace),
            channel=_hash(salt, channel),
            user=_hash(salt, turn.user),
            conversation=_hash(salt, turn.conversation_key),
            route=answer.route.value if answer else "",
            outcome=outcome,
            citations=cited,
            collections=turn.scope.collections,
            latency_ms=round(ended.latency_s * 1000, 1),
            llm_calls=answer.llm_calls if answer else 0,
            cache_hit=bool(answer and answer.cache == "hit"),
            question_chars=len(turn.text),
            language=detect_language(turn.text),
            topic_nouns=nouns,
            question=turn.text[:QUESTION_KEEP_CHARS] if self._keep_questions else "",
            answer=answer.text[:ANSWER_KEEP_CHARS] if self._keep_questions and answer else "",
        )

    def _feedback_record(self, given: _GivenFeedback, salt: str) -> FeedbackRecord:
        fb = given.feedback
        return FeedbackRecord(
            at=given.at,
            platform=fb.platform,
            rating=fb.rating,
            turn_id=fb.turn_id,
            conversation=_hash(salt, fb.conversation_key),
            user=_hash(salt, fb.user),
            comment=fb.comment[:QUESTION_KEEP_CHARS] if self._keep_questions else "",
        )

    # --- lifecycle --------------------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Wait until every queued record is written (or dropped)."""
        if self._worker is not None and not self._worker.done():
            await self._queue.join()

    async def close(self, *, timeout_s: float = 5.0) -> None:
        """Flush what is queued (at most `timeout_s`), stop the worker and close the store."""
        try:
            async with asyncio.timeout(timeout_s):
                await self.flush()
        except TimeoutError:
            logger.warning("turn records: %d records not written at shutdown", self._queue.qsize())
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        try:
            await self.store.close()
        except Exception as exc:
            logger.warning("turn records: closing the store failed: %s", exc.__class__.__name__)


def _hash(salt: str, value: str) -> str:
    if not value:
        return ""
    return hmac.new(salt.encode(), value.encode(), hashlib.sha256).hexdigest()[:16]


def _workspace_and_channel(conversation_key: str) -> tuple[str, str]:
    """`slack:T01:C02:ts` → (T01, C02); a Teams conversation id (`19:…;messageid=…`) up to its thread part."""
    parts = conversation_key.split(":", 2)
    if len(parts) < 3:
        return "", ""  # the playground: one conversation per browser tab, no workspace or channel
    platform, workspace, rest = parts
    channel = rest.split(";", 1)[0] if platform == "teams" else rest.split(":", 1)[0]
    return workspace, channel


def build_recorder(settings: Settings, components: Components) -> TurnRecorder | None:
    """The server's recorder, or None when REGBOT_RECORDS_DAYS is 0 (no records at all)."""
    if settings.records_days <= 0:
        return None
    return TurnRecorder(
        open_record_store(settings),
        keep_questions=settings.keep_questions,
        retention_days=settings.records_days,
        topic_nouns=TopicNouns.for_tokenizer(components.tokenizer),
    )


__all__ = [
    "CitedArticle",
    "FeedbackRecord",
    "RecordStore",
    "RedisRecordStore",
    "SqliteRecordStore",
    "TurnRecord",
    "TurnRecorder",
    "build_recorder",
    "open_record_store",
    "turn_outcome",
]
