"""Dense index: a Chroma collection (embedded persistent, or a `chroma run` server) with our embedder."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlparse

from rag.errors import RetrievalUnavailable
from rag.models import Chunk
from rag.retrieval.embedder import Embedder, RegbotEmbeddingFunction

log = logging.getLogger(__name__)


def open_chroma_client(*, chroma_url: str = "", persist_dir: Path | None = None):
    """A Chroma client: HTTP when `chroma_url` is set, else embedded and persistent in `persist_dir`."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_url:
        url = urlparse(chroma_url)
        return chromadb.HttpClient(host=url.hostname or "127.0.0.1", port=url.port or 8000,
                                   ssl=url.scheme == "https", settings=settings)
    if persist_dir is None:
        raise ValueError("persist_dir is required for embedded Chroma")
    persist_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(persist_dir), settings=settings)


def chunk_metadata(chunk: Chunk) -> dict[str, str | int | bool]:
    """The filterable fields Chroma keeps beside each vector."""
    return {"collection": chunk.collection, "doc": chunk.doc, "article": chunk.article, "kind": chunk.kind,
            "deleted": chunk.deleted, "status": chunk.status, "audience": chunk.audience, "domain": chunk.domain}


class DenseIndex:
    """Vectors for chunks; embeds only what it is given (ingest passes new or changed chunks only)."""

    def __init__(self, client, embedder: Embedder, *, collection_name: str = "regbot") -> None:
        self.embedder = embedder
        self.function = RegbotEmbeddingFunction(embedder)
        # One Chroma collection per embedder: vectors of different models never mix.
        name = f"{collection_name}-{embedder.name}".replace("_", "-")[:60]
        try:
            self.collection = client.get_or_create_collection(
                name=name, embedding_function=self.function, configuration={"hnsw": {"space": "cosine"}},
            )
        except Exception as exc:  # chromadb raises many transport types
            raise RetrievalUnavailable(f"Chroma is not reachable: {exc.__class__.__name__}") from exc

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            result = self.collection.get(ids=list(ids[start : start + 500]), include=[])
            found.update(result["ids"])
        return found

    def upsert(self, chunks: Sequence[Chunk], batch: int = 64, progress=None) -> None:
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            embeddings = self.embedder.embed_passages([c.text for c in part])
            self.collection.upsert(
                ids=[c.chunk_id for c in part], embeddings=embeddings,  # type: ignore[arg-type]
                documents=[c.text for c in part], metadatas=[chunk_metadata(c) for c in part],
            )
            if progress:
                progress(len(part))

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 500):
            self.collection.delete(ids=list(ids[start : start + 500]))

    def search(self, query: str, k: int, *, collections: Sequence[str] = ()) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first."""
        where: dict = {"deleted": False}
        if collections:
            where = {"$and": [where, {"collection": {"$in": list(collections)}}]}
        try:
            result = self.collection.query(
                query_embeddings=[self.embedder.embed_query(query)], n_results=k, where=where, include=["distances"],
            )
        except Exception as exc:
            raise RetrievalUnavailable(f"Chroma query failed: {exc.__class__.__name__}") from exc
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else [0.0] * len(ids)
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=False)]

    def count(self) -> int:
        return self.collection.count()
