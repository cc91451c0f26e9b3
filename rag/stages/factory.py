"""Builds the pipeline's stages: the LLM implementations (each over its offline sibling) or the offline ones."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from rag.cache import SemanticAnswerCache
from rag.llm import LlmProvider
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.query import ConversationFolder, QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.agent_tools import AgentTools, RegulationSearch
from rag.stages.changes import AmendmentNotes, ChangeAnswerer
from rag.stages.contracts import FollowupSuggester, Generator, Grader, Rewriter, Understander, Verifier
from rag.stages.enhancer import HistoryWindow, OfflineQueryEnhancer
from rag.stages.followups import LlmFollowupSuggester, OfflineFollowupSuggester
from rag.stages.generator import ExtractiveGenerator, LlmGenerator
from rag.stages.grader import LlmGrader, OfflineGrader
from rag.stages.legal_basis import CollectionRoles, LegalBasis
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.rewriter import LlmQueryRewriter, OfflineQueryRewriter
from rag.stages.router import OfflineQueryRouter
from rag.stages.smalltalk import SmallTalkResponder
from rag.stages.structural import StructuralAnswerer
from rag.stages.understanding import LlmQueryUnderstander, OfflineQueryUnderstander
from rag.stages.verifier import LlmVerifier, OfflineVerifier


@dataclass
class PipelineStages:
    """The stages the pipeline calls; each is the LLM implementation or its offline sibling."""

    understander: Understander
    grader: Grader
    rewriter: Rewriter
    generator: Generator
    verifier: Verifier
    followups: FollowupSuggester
    structural: StructuralAnswerer
    cache: SemanticAnswerCache | None = None  # answers to history-less search questions
    smalltalk: SmallTalkResponder = field(default_factory=SmallTalkResponder)
    llm: LlmProvider | None = None  # the provider the LLM stages share (its breaker state goes in the answer)
    legal: LegalBasis | None = None  # "관련 법령" / "관련 사내 규정" after the answer (collections with roles)
    amendments: AmendmentNotes | None = None  # "※ 취업규칙 제20조: 2026-03-01 개정" under an answer quoting it


class StageTimeouts(BaseModel):
    """How long each LLM stage waits before using its offline sibling.

    With the LLM hanging, the first structured call gets no byte within `structured_hang_s` (which opens the
    breaker), every later stage skips the LLM, and the quoted answer follows about that long after the question.
    A reply that is slow but progressing is waited for up to `structured_s`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")  # a misspelt timeout must not silently be the default

    structured_s: float = Field(15.0, gt=0)  # understand, grade, rewrite, verify, follow-ups: whole call, retries in
    structured_hang_s: float = Field(2.0, gt=0)  # their stream: nothing for this long (first byte, between events)
    stream_hang_s: float = Field(8.0, gt=0)  # the answer stream: first and every later delta (also tool rounds)


def build_stages(*, llm: LlmProvider | None, corpus: IndexedCorpus, tokenizer: Tokenizer, lookup: StructuralLookup,
                 analyzer: QueryAnalyzer, cache: SemanticAnswerCache | None = None,
                 timeouts: StageTimeouts | None = None, folder: ConversationFolder | None = None,
                 answerable_threshold: float | None = None, search: RegulationSearch | None = None,
                 max_tool_rounds: int = 2, hyde: bool = True, window: HistoryWindow | None = None,
                 roles: CollectionRoles | None = None, changes: ChangeAnswerer | None = None,
                 amendments: AmendmentNotes | None = None) -> PipelineStages:
    """The stages for `AnswerPipeline`. With `llm=None` they are exactly the offline stages.

    `llm` should be the `ResilientProvider` from `build_llm_provider` (retries, breaker, per-turn budget).
    `search` (the hybrid retriever) with `lookup` gives the answer's LLM its tools; without it, no tools.
    """
    timeouts = timeouts or StageTimeouts()
    enhancer = OfflineQueryEnhancer(folder or ConversationFolder(tokenizer), window=window)
    understander = OfflineQueryUnderstander(enhancer=enhancer,
                                            router=OfflineQueryRouter(lookup, tokenizer, corpus=corpus,
                                                                      changes=changes),
                                            planner=OfflineQueryPlanner(tokenizer), glossary=analyzer.glossary)
    grader = OfflineGrader(corpus, tokenizer, analyzer=analyzer, threshold=answerable_threshold)
    smalltalk = SmallTalkResponder(corpus)
    rewriter = OfflineQueryRewriter(analyzer)
    verifier = OfflineVerifier(corpus, tokenizer)
    followups = OfflineFollowupSuggester(lookup.citations)
    structural = StructuralAnswerer(lookup, changes=changes)
    legal = LegalBasis(corpus, lookup, tokenizer, roles=roles)

    extractive = ExtractiveGenerator(corpus, tokenizer, analyzer=analyzer)

    if llm is None:
        return PipelineStages(understander=understander, grader=grader, rewriter=rewriter,
                              generator=extractive, verifier=verifier,
                              followups=followups, structural=structural, cache=cache, smalltalk=smalltalk,
                              legal=legal, amendments=amendments)

    tools = AgentTools(lookup=lookup, search=search) if search is not None and max_tool_rounds > 0 else None

    llm_generator = LlmGenerator(llm, fallback=extractive, tokenizer=tokenizer, hang_timeout_s=timeouts.stream_hang_s,
                                 tools=tools, max_tool_rounds=max_tool_rounds)

    fast_s, hang_s = timeouts.structured_s, timeouts.structured_hang_s
    return PipelineStages(
        understander=LlmQueryUnderstander(llm, fallback=understander, lookup=lookup, timeout_s=fast_s, hang_s=hang_s,
                                          hyde=hyde, window=window, analyzer=analyzer),
        grader=LlmGrader(llm, fallback=grader, timeout_s=fast_s, hang_s=hang_s),
        rewriter=LlmQueryRewriter(llm, fallback=rewriter, timeout_s=fast_s, hang_s=hang_s),
        generator=llm_generator,
        verifier=LlmVerifier(llm, fallback=verifier, timeout_s=fast_s, hang_s=hang_s),
        followups=LlmFollowupSuggester(llm, fallback=followups, timeout_s=fast_s, hang_s=hang_s),
        structural=structural,
        cache=cache,
        smalltalk=smalltalk,
        llm=llm,
        legal=legal,
        amendments=amendments,
    )
