"""Builds the pipeline's stages: the LLM implementations (each over its offline sibling) or the offline ones."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.cache import SemanticAnswerCache
from rag.llm import LlmProvider
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.query import ConversationFolder, QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.agent_tools import AgentTools, RegulationSearch
from rag.stages.answerability import AnswerabilityJudge
from rag.stages.changes import AmendmentNotes, ChangeAnswerer
from rag.stages.config import StagesConfig
from rag.stages.contracts import FollowupSuggester, Generator, Grader, Rewriter, Understander, Verifier
from rag.stages.enhancer import HistoryWindow, OfflineQueryEnhancer
from rag.stages.followups import LlmFollowupSuggester, OfflineFollowupSuggester
from rag.stages.generator import ExtractiveGenerator, LlmGenerator
from rag.stages.grader import LlmGrader, OfflineGrader
from rag.stages.legal_basis import CollectionRoles, LegalBasis
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.question_core import QuestionCues
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


def build_stages(*, llm: LlmProvider | None, corpus: IndexedCorpus, tokenizer: Tokenizer, lookup: StructuralLookup,
                 analyzer: QueryAnalyzer, config: StagesConfig | None = None, cache: SemanticAnswerCache | None = None,
                 folder: ConversationFolder | None = None, search: RegulationSearch | None = None,
                 changes: ChangeAnswerer | None = None, amendments: AmendmentNotes | None = None,
                 question_cues: QuestionCues | None = None) -> PipelineStages:
    """The stages for `AnswerPipeline`. With `llm=None` they are exactly the offline stages.

    `llm` should be the `ResilientProvider` from `build_llm_provider` (retries, breaker, per-turn budget).
    `search` (the hybrid retriever) with `lookup` gives the answer's LLM its tools; without it, no tools.
    Every knob comes from `config` (its defaults without one); `question_cues` (the package's table extended by a
    deployment's lexicon) tell the answerability judge a question's legal core from its story.
    """
    config = config or StagesConfig()
    window = HistoryWindow(messages=config.history_messages, chars=config.history_chars)
    folder = folder or ConversationFolder(tokenizer, glossary=analyzer.glossary)
    enhancer = OfflineQueryEnhancer(folder, window=window)
    understander = OfflineQueryUnderstander(enhancer=enhancer,
                                            router=OfflineQueryRouter(lookup, tokenizer, corpus=corpus,
                                                                      changes=changes),
                                            planner=OfflineQueryPlanner(tokenizer), glossary=analyzer.glossary)
    judge = AnswerabilityJudge(corpus, tokenizer, analyzer=analyzer, threshold=config.answerable_threshold,
                               cues=question_cues, folder=folder)
    grader = OfflineGrader(corpus, tokenizer, analyzer=analyzer, judge=judge)
    smalltalk = SmallTalkResponder(corpus)
    rewriter = OfflineQueryRewriter(analyzer)
    verifier = OfflineVerifier(corpus, tokenizer)
    followups = OfflineFollowupSuggester(lookup.citations)
    structural = StructuralAnswerer(lookup, changes=changes)
    legal = LegalBasis(corpus, lookup, tokenizer, roles=CollectionRoles(law=config.law_collections))

    extractive = ExtractiveGenerator(corpus, tokenizer, analyzer=analyzer, tuning=config)

    if llm is None:
        return PipelineStages(understander=understander, grader=grader, rewriter=rewriter,
                              generator=extractive, verifier=verifier,
                              followups=followups, structural=structural, cache=cache, smalltalk=smalltalk,
                              legal=legal, amendments=amendments)

    rounds = config.max_tool_rounds
    tools = AgentTools(lookup=lookup, search=search) if search is not None and rounds > 0 else None

    llm_generator = LlmGenerator(llm, fallback=extractive, tokenizer=tokenizer, hang_timeout_s=config.stream_hang_s,
                                 max_tokens=config.answer_max_tokens, source_chars=config.answer_source_chars,
                                 tools=tools, max_tool_rounds=rounds, hold_chars=config.answer_hold_chars)

    fast_s, hang_s = config.structured_s, config.structured_hang_s
    return PipelineStages(
        understander=LlmQueryUnderstander(llm, fallback=understander, lookup=lookup, hyde=config.hyde, window=window,
                                          analyzer=analyzer, memo_size=config.understanding_memo_size,
                                          timeout_s=fast_s, hang_s=hang_s),
        grader=LlmGrader(llm, fallback=grader, pass_score=config.grade_pass_score,
                         hedge_score=config.grade_hedge_score, timeout_s=fast_s, hang_s=hang_s),
        rewriter=LlmQueryRewriter(llm, fallback=rewriter, timeout_s=fast_s, hang_s=hang_s),
        generator=llm_generator,
        verifier=LlmVerifier(llm, fallback=verifier, confirm_support=config.verify_confirm_support, timeout_s=fast_s,
                             hang_s=hang_s),
        followups=LlmFollowupSuggester(llm, fallback=followups, timeout_s=fast_s, hang_s=hang_s),
        structural=structural,
        cache=cache,
        smalltalk=smalltalk,
        llm=llm,
        legal=legal,
        amendments=amendments,
    )
