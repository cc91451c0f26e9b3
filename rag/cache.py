"""Semantic answer cache: a repeated (or closely reworded) question gets the stored answer without retrieval or LLM.

Entries are scoped by collection and audience and by the index's identity (`ChunkStore.identity`: a random id
written when the index was created, plus its version), so ingest invalidates them and a rebuilt data dir never
meets an old entry: a new identity is a new namespace, and the old entries simply expire. An answer is stored
under the identity read when its turn started, so one built from an index that changed meanwhile is never
served as the new index's. A question matches a stored one when their
normalised text is equal, or when their embeddings are at least `threshold` similar *and* they mention the same
numbers ("입사 1년" and "입사 3년" embed almost alike but have different answers).

The cache talks to storage through `CacheBackend` (JSON values by key, with a TTL). The bot's state store
satisfies it as is; `MemoryCacheBackend` serves rag-only use and tests.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from rag.errors import RegbotError
from rag.models import Citation, Scope
from rag.retrieval.embedder import Embedder
from rag.text import comparable_text, normalize_text

log = logging.getLogger(__name__)

_NUMBER = re.compile(r"\d+")


class CacheBackend(Protocol):
    """Key → JSON value with a time to live. Implementations raise `RegbotError` subclasses when unreachable."""

    async def cache_get(self, key: str) -> JsonValue | None: ...

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None: ...


class MemoryCacheBackend:
    """In-process backend: bounded (least recently used goes first), entries expire after their TTL."""

    def __init__(self, *, max_entries: int = 2048, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, JsonValue]] = OrderedDict()

    async def cache_get(self, key: str) -> JsonValue | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires_at, value = entry
        if self._clock() >= expires_at:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    async def cache_set(self, key: str, value: JsonValue, ttl_s: float) -> None:
        self._entries[key] = (self._clock() + ttl_s, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


class CachedAnswer(BaseModel):
    """What a cache hit replays: the verified answer, its sources and follow-ups, and what it retrieved."""

    model_config = ConfigDict(frozen=True)

    question: str
    text: str
    citations: tuple[Citation, ...] = ()
    followups: tuple[str, ...] = ()
    retrieved_ids: tuple[str, ...] = ()


class CacheMatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    answer: CachedAnswer
    similarity: float  # 1.0 for the same normalised question


class _IndexEntry(BaseModel):
    key: str
    numbers: str
    vector: str  # float16, base64: ~1 KB for 384 dimensions


normalize_question = comparable_text


class SemanticAnswerCache:
    """Looks answers up by normalised question, then by embedding similarity within the same scope and index."""

    def __init__(self, backend: CacheBackend, *, index_version: Callable[[], int | str],
                 embedder: Embedder | None = None, threshold: float = 0.97, ttl_s: float = 24 * 3600.0,
                 max_similar_entries: int = 200) -> None:
        """
        Args:
            backend: where entries live (the bot's state store, or `MemoryCacheBackend`).
            index_version: the index's identity (`ChunkStore.identity`); a new one empties the cache.
            embedder: query embedder for similar questions; None matches normalised text only.
            threshold: cosine similarity a reworded question needs (e5-small puts paraphrases at ~0.98 and
                "연차" vs "병가" in the same sentence at ~0.95).
            ttl_s: how long an answer is served.
            max_similar_entries: how many recent questions per scope are compared by embedding.
        """
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be within (0, 1]")
        self.backend = backend
        self.index_version = index_version
        self.embedder = embedder
        self.threshold = threshold
        self.ttl_s = ttl_s
        self.max_similar_entries = max_similar_entries

    def index_identity(self) -> str:
        """The index's identity now; read it when a turn starts and pass it to `lookup` and `store`."""
        return str(self.index_version())

    async def lookup(self, question: str, scope: Scope, *, index: str | None = None) -> CacheMatch | None:
        """The stored answer for this question (or a close rewording of it) in this scope and index, if any."""
        normalized = normalize_question(question)
        if not normalized:
            return None
        namespace = self._namespace(scope, index)
        try:
            exact = await self._load(self._answer_key(namespace, normalized))
            if exact is not None:
                return CacheMatch(answer=exact, similarity=1.0)
            if self.embedder is None:
                return None
            entries = await self._index(namespace)
            if not entries:
                return None
            vector = await self._embed(question)
            best_key, best_similarity = self._most_similar(vector, _numbers(question), entries)
            if best_key is None:
                return None
            similar = await self._load(best_key)
        except RegbotError as exc:
            log.warning("answer cache lookup failed: %s", exc)
            return None
        return CacheMatch(answer=similar, similarity=round(best_similarity, 4)) if similar is not None else None

    async def store(self, question: str, scope: Scope, answer: CachedAnswer, *, index: str | None = None) -> None:
        """Keep a grounded, verified answer, under the index identity its turn started with (`index`)."""
        normalized = normalize_question(question)
        if not normalized:
            return
        namespace = self._namespace(scope, index)
        key = self._answer_key(namespace, normalized)
        try:
            await self.backend.cache_set(key, answer.model_dump(mode="json"), self.ttl_s)
            if self.embedder is None:
                return
            vector = await self._embed(question)
            entry = _IndexEntry(key=key, numbers=_numbers(question), vector=_pack(vector))
            # Read-modify-write without a lock: two replicas storing at once may drop one entry — a later miss.
            entries = [e for e in await self._index(namespace) if e.key != key]
            entries = [*entries, entry][-self.max_similar_entries :]
            await self.backend.cache_set(self._index_key(namespace), [e.model_dump() for e in entries], self.ttl_s)
        except RegbotError as exc:
            log.warning("answer cache store failed: %s", exc)

    def _namespace(self, scope: Scope, index: str | None) -> str:
        identity = self.index_identity() if index is None else index
        scope_text = f"{','.join(sorted(scope.collections))}|{scope.audience}|{identity}"
        return hashlib.sha256(scope_text.encode()).hexdigest()[:16]

    @staticmethod
    def _answer_key(namespace: str, normalized: str) -> str:
        return f"answer:{namespace}:{hashlib.sha256(normalized.encode()).hexdigest()[:32]}"

    @staticmethod
    def _index_key(namespace: str) -> str:
        return f"answer-index:{namespace}"

    async def _load(self, key: str) -> CachedAnswer | None:
        raw = await self.backend.cache_get(key)
        if raw is None:
            return None
        try:
            return CachedAnswer.model_validate(raw)
        except ValidationError:
            log.warning("answer cache entry %s has an old or broken shape; ignored", key)
            return None

    async def _index(self, namespace: str) -> list[_IndexEntry]:
        raw = await self.backend.cache_get(self._index_key(namespace))
        if not isinstance(raw, list):
            return []
        try:
            return [_IndexEntry.model_validate(item) for item in raw]
        except ValidationError:
            return []

    async def _embed(self, question: str) -> np.ndarray:
        assert self.embedder is not None
        vector = np.asarray(await asyncio.to_thread(self.embedder.embed_query, normalize_text(question)),
                            dtype=np.float32)
        norm = float(np.linalg.norm(vector)) or 1.0
        return vector / norm

    def _most_similar(self, vector: np.ndarray, numbers: str,
                      entries: list[_IndexEntry]) -> tuple[str | None, float]:
        candidates = [e for e in entries if e.numbers == numbers]
        if not candidates:
            return None, 0.0
        matrix = np.stack([_unpack(e.vector) for e in candidates])
        if matrix.shape[1] != vector.shape[0]:
            return None, 0.0  # stored by another embedder
        similarities = matrix @ vector
        best = int(np.argmax(similarities))
        if float(similarities[best]) < self.threshold:
            return None, float(similarities[best])
        return candidates[best].key, float(similarities[best])


def _numbers(question: str) -> str:
    return " ".join(sorted(_NUMBER.findall(normalize_text(question))))


def _pack(vector: np.ndarray) -> str:
    return base64.b64encode(vector.astype(np.float16).tobytes()).decode("ascii")


def _unpack(text: str) -> np.ndarray:
    vector = np.frombuffer(base64.b64decode(text), dtype=np.float16).astype(np.float32)
    norm = float(np.linalg.norm(vector)) or 1.0
    return vector / norm
