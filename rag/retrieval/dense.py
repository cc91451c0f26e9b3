"""Dense index: a Chroma collection (embedded persistent, or a `chroma run` server) with our embedder.

Only a bounded passage is embedded per chunk (the article header plus the first `passage_chars` characters of
its body): the e5 encoder's cost grows steeply with length, and the header and opening sentences carry most of
what the vector can tell apart. The chunk's full text is still what lexical search, the grader and the answer
read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlparse

from rag.errors import RetrievalUnavailable
from rag.models import Chunk
from rag.retrieval.embedder import Embedder

log = logging.getLogger(__name__)

# Characters of the body embedded after the header; chosen by measurement (benchmarks/retrieval.py --passage).
DEFAULT_PASSAGE_CHARS = 200
# Vectors written to Chroma per upsert (its limit is 5461 for 1.x's SQLite back end).
WRITE_BATCH = 5000


def open_chroma_client(*, chroma_url: str = "", token: str = "", persist_dir: Path | None = None):
    """A Chroma client: HTTP when `chroma_url` is set (with `token` as a bearer token when given), else embedded
    and persistent in `persist_dir`."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_url:
        url = urlparse(chroma_url)
        try:
            return chromadb.HttpClient(host=url.hostname or "127.0.0.1", port=url.port or 8000,
                                       ssl=url.scheme == "https", settings=settings,
                                       headers={"Authorization": f"Bearer {token}"} if token else None)
        except ValueError as exc:  # chromadb's "Could not connect to a Chroma server": lexical-only, not a crash
            raise RetrievalUnavailable(f"Chroma is not reachable at {chroma_url}") from exc
    if persist_dir is None:
        raise ValueError("persist_dir is required for embedded Chroma")
    persist_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(persist_dir), settings=settings)


def chunk_metadata(chunk: Chunk) -> dict[str, str | int | bool]:
    """The filterable fields Chroma keeps beside each vector."""
    return {"collection": chunk.collection, "doc": chunk.doc, "article": chunk.article, "kind": chunk.kind,
            "deleted": chunk.deleted, "status": chunk.status, "audience": chunk.audience, "domain": chunk.domain}


def passage_text(chunk: Chunk, passage_chars: int | None = DEFAULT_PASSAGE_CHARS) -> str:
    """What the dense model reads for a chunk: its header line and the start of its body (None: all of it)."""
    if passage_chars is None:
        return chunk.text
    header, _, body = chunk.text.partition("\n")
    body = " ".join(body.split())[:passage_chars]
    return f"{header}\n{body}" if body else header


class DenseIndex:
    """Vectors for chunks; embeds only what it is given (ingest passes new or changed chunks only).

    The collection name carries the embedder and the passage size, so vectors of different models or passage
    policies never mix: changing either starts a fresh collection that the next ingest fills.

    `client` is a Chroma client, or a function that opens one: then Chroma (and the chromadb import, ~3 s) waits
    for the first call that needs the collection, so a question answered from the corpus's own vector mirror
    never loads it.
    """

    def __init__(self, client: object | Callable[[], object], embedder: Embedder, *, collection_name: str = "regbot",
                 passage_chars: int | None = DEFAULT_PASSAGE_CHARS) -> None:
        if passage_chars is not None and passage_chars < 0:
            raise ValueError("passage_chars must be >= 0 (0: the header only) or None (the whole chunk)")
        self.embedder = embedder
        self.passage_chars = passage_chars
        policy = "" if passage_chars is None else f"-p{passage_chars}"
        name = f"{collection_name}-{embedder.name}".replace("_", "-")[:54] + policy
        self.name = name
        self._client = client
        self._collection = None
        self._open_lock = threading.Lock()
        if not callable(client):
            self._open()

    @property
    def collection(self):
        """The Chroma collection, opened on first use; RetrievalUnavailable when Chroma cannot be reached."""
        return self._collection if self._collection is not None else self._open()

    def _open(self):
        from rag.retrieval.chroma_embedding import RegbotEmbeddingFunction

        with self._open_lock:
            if self._collection is not None:
                return self._collection
            try:
                client = self._client() if callable(self._client) else self._client
                self._collection = client.get_or_create_collection(
                    name=self.name, embedding_function=RegbotEmbeddingFunction(self.embedder),
                    configuration={"hnsw": {"space": "cosine"}},
                )
            except RetrievalUnavailable:
                raise
            except Exception as exc:  # chromadb raises many transport types
                raise RetrievalUnavailable(f"Chroma is not reachable: {exc.__class__.__name__}") from exc
            return self._collection

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            result = self.collection.get(ids=list(ids[start : start + 500]), include=[])
            found.update(result["ids"])
        return found

    def upsert(self, chunks: Sequence[Chunk], batch: int = 64, progress=None) -> None:
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            embeddings = self.embedder.embed_passages([passage_text(c, self.passage_chars) for c in part])
            self.add_vectors(part, embeddings)
            if progress:
                progress(len(part))

    def add_vectors(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        """Store vectors for chunks, in upserts as large as Chroma takes (one float32 array each)."""
        import numpy as np

        batch = WRITE_BATCH
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            try:
                self.collection.upsert(
                    ids=[c.chunk_id for c in part],
                    embeddings=np.asarray(vectors[start : start + batch], dtype=np.float32),
                    documents=[c.text for c in part], metadatas=[chunk_metadata(c) for c in part],
                )
            except RetrievalUnavailable:
                raise
            except Exception as exc:  # chromadb raises many transport types
                raise RetrievalUnavailable(f"Chroma write failed: {exc.__class__.__name__}") from exc

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 500):
            self.collection.delete(ids=list(ids[start : start + 500]))

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored vectors by chunk id (ids without a vector are absent)."""
        found: dict[str, list[float]] = {}
        try:
            for start in range(0, len(ids), 1000):
                result = self.collection.get(ids=list(ids[start : start + 1000]), include=["embeddings"])
                embeddings = result.get("embeddings")
                if embeddings is None:
                    continue
                found.update(zip(result["ids"], (list(e) for e in embeddings), strict=True))
        except Exception as exc:  # chromadb raises many transport types
            raise RetrievalUnavailable(f"Chroma read failed: {exc.__class__.__name__}") from exc
        return found

    def embed_query(self, query: str) -> list[float]:
        return self.embedder.embed_query(query)

    def search(self, query: str, k: int, *, collections: Sequence[str] = (),
               vector: Sequence[float] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first; pass `vector` when the query is already embedded.

        Deleted chunks are not filtered here (a metadata filter makes Chroma's query ~10× slower): the caller's
        mask drops them, as it drops everything else outside the scope."""
        where = {"collection": {"$in": list(collections)}} if collections else None
        embedding = list(vector) if vector is not None else self.embedder.embed_query(query)
        try:
            result = self.collection.query(query_embeddings=[embedding], n_results=k, where=where,
                                           include=["distances"])
        except Exception as exc:
            raise RetrievalUnavailable(f"Chroma query failed: {exc.__class__.__name__}") from exc
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else [0.0] * len(ids)
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=False)]

    def count(self) -> int:
        return self.collection.count()
