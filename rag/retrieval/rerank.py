"""Rerankers: a heuristic by default, a cross-encoder when weights are configured, an LLM listwise pass when an
LLM is configured. Each reorders the fused candidates of one query; none adds or drops a candidate."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from rag.errors import ConfigError
from rag.lang.sentences import DEFINED_TERM
from rag.llm import LlmProvider, LlmRequest, LlmUnavailable
from rag.models import Hit, Message, Role, split_paragraphs
from rag.retrieval.config import EXPANSION_WEIGHT, RetrievalConfig
from rag.retrieval.query import AnalyzedQuery

log = logging.getLogger(__name__)


class Reranker(Protocol):
    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]: ...


@runtime_checkable
class AsyncReranker(Protocol):
    """A reranker that needs I/O (an LLM); the retriever awaits it from `search`, `search_sync` uses `rerank`."""

    async def arerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]: ...

    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]: ...


def _present(token: str, text: str) -> bool:
    """A query token found in text; verb stems (받다) are looked up without the 다 the tokenizer adds."""
    if token.endswith("다") and len(token) >= 3:
        return token[:-1] in text
    return token in text


def heuristic_reranker(config: RetrievalConfig, idf: Callable[[str], float]) -> HeuristicReranker:
    """The heuristic reranker with the weights `RetrievalConfig` gives it."""
    return HeuristicReranker(idf=idf, title_weight=config.rerank_title_weight, body_weight=config.rerank_body_weight,
                             addenda_penalty=config.rerank_addenda_penalty, expansion_weight=config.expansion_weight,
                             context_weight=config.rerank_context_weight,
                             paragraph_weight=config.rerank_paragraph_weight,
                             quantity_weight=config.rerank_quantity_weight, core_weight=config.rerank_core_weight,
                             defines_weight=config.rerank_defines_weight)


# The columns of `HeuristicReranker.features`, in order; `rag/data/ranking_fit.yaml` fits one weight per column
# (the fused score's weight is the unit).
FEATURES = ("fused", "title", "body", "paragraph", "quantity", "core", "defines")


@lru_cache(maxsize=8192)
def defined_terms(text: str) -> frozenset[str]:
    """The terms a provision defines ("“임금”이란 …" → 임금), spaces removed; keyed by the text itself, so a
    re-ingested article is read anew."""
    return frozenset(t.replace(" ", "") for t in DEFINED_TERM.findall(text))


def defines_asked(classified: Sequence[str], text: str) -> bool:
    """Does the text define a term the question asks whether something counts as ("임금에 해당하는지")? A term
    read with a longer word before it ("가족수당이임금") still ends with the defined one."""
    defined = defined_terms(text) if classified else frozenset()
    return any(term.endswith(d) for term in classified for d in defined if len(d) > 1)


class HeuristicReranker:
    """Reorders by the fused score plus how much of the question the article's title and body cover.

    Coverage is IDF-weighted: the rare words of a question (휴업, 위약금) decide, the common ones (근로자, 회사)
    barely count. Synonym expansions count at a lower weight. A title that covers the question is the strongest
    signal statutes offer: the title is the article's own summary. The question's words together in one paragraph
    count too: an article that answers holds them in the 항 that answers, one that merely mentions them scatters
    them. A question asking "how many weeks" favours an article stating a number of weeks. A long question's core
    (its last clause: what is asked, after the story) is covered separately, so the story's words cannot outvote
    it. A question asking whether something counts as a term ("임금에 해당하는지") favours the article defining
    that term. 부칙 and stub annexes are demoted.
    """

    def __init__(self, *, idf: Callable[[str], float] | None = None, fused_weight: float = 1.0,
                 title_weight: float = 0.35, body_weight: float = 0.35, addenda_penalty: float = 0.5,
                 expansion_weight: float = EXPANSION_WEIGHT, context_weight: float = 0.3,
                 paragraph_weight: float = 0.2, quantity_weight: float = 0.2, core_weight: float = 0.0,
                 defines_weight: float = 0.0) -> None:
        self.idf = idf or (lambda token: 1.0)
        self.fused_weight = fused_weight
        self.title_weight = title_weight
        self.body_weight = body_weight
        self.addenda_penalty = addenda_penalty
        self.expansion_weight = expansion_weight
        self.context_weight = context_weight
        self.paragraph_weight = paragraph_weight
        self.quantity_weight = quantity_weight
        self.core_weight = core_weight
        self.defines_weight = defines_weight

    @property
    def weights(self) -> np.ndarray:
        """One weight per `FEATURES` column."""
        return np.array([self.fused_weight, self.title_weight, self.body_weight, self.paragraph_weight,
                         self.quantity_weight, self.core_weight, self.defines_weight])

    def features(self, query: AnalyzedQuery, hits: Sequence[Hit]) -> tuple[np.ndarray, np.ndarray]:
        """(hits × `FEATURES` matrix, per hit: is it 부칙 or a stub annex). The fused score is relative to the
        best hit's, coverages are IDF-weighted shares of the question's words."""
        weights = {t: w * self.idf(t) for t, w in query.weighted_tokens(
            expansion_weight=self.expansion_weight, context_weight=self.context_weight).items() if len(t) > 1}
        total = sum(weights.values()) or 1.0
        core_tokens = set(query.core_tokens) if query.core_tokens else set(query.tokens)
        core = {t: w for t, w in weights.items() if t in core_tokens}
        core_total = sum(core.values()) or 1.0
        top = max((h.score for h in hits), default=1.0) or 1.0
        quantities = query.facets.stated_units
        classified = query.facets.classified
        rows = np.zeros((len(hits), len(FEATURES)))
        stub = np.zeros(len(hits), dtype=bool)

        def cover(terms: dict[str, float], text: str) -> float:
            return sum(w for t, w in terms.items() if _present(t, text))

        for n, hit in enumerate(hits):
            chunk = hit.chunk
            title, body = chunk.title, chunk.text
            rows[n, 0] = hit.score / top
            rows[n, 1] = cover(weights, title) / total if title else 0.0
            rows[n, 2] = cover(weights, body) / total
            rows[n, 3] = max((cover(weights, text) / total for _, text in split_paragraphs(body)), default=0.0)
            if quantities:
                rows[n, 4] = sum(1 for q in quantities if q.search(body)) / len(quantities)
            rows[n, 5] = cover(core, f"{title} {body}") / core_total if core else 0.0
            rows[n, 6] = float(defines_asked(classified, body))
            stub[n] = chunk.kind == "addenda" or (chunk.kind in ("annex", "form") and len(body) < 200)
        return rows, stub

    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return hits
        rows, stub = self.features(query, hits)
        values = (rows @ self.weights) * np.where(stub, self.addenda_penalty, 1.0)
        rescored = [hit.model_copy(update={"score": float(v)}) for hit, v in zip(hits, values, strict=True)]
        return sorted(rescored, key=lambda h: -h.score)


class CrossEncoderReranker:
    """A cross-encoder (e.g. a Korean bge-reranker) scoring (question, passage) pairs; needs local weights.

    Public Korean results put such a model at about +5 pp MRR over the fused order, at 0.3–1.2 s a query on a
    laptop CPU, so it is opt-in. `sentence-transformers` must be installed and `model_path` must hold the model.
    """

    def __init__(self, model_path: str | Path, *, top_n: int = 20, max_chars: int = 512,
                 loader: Callable[[str], object] | None = None) -> None:
        path = Path(model_path) if model_path else None
        if path is None or not path.exists():
            raise ConfigError(
                f"the cross-encoder reranker needs model weights on disk; {model_path or '(unset)'} does not exist. "
                "Download a reranker (e.g. dragonkue/bge-reranker-v2-m3-ko) where the bot runs and point the "
                "reranker setting at its folder, or use the default heuristic reranker.")
        if loader is None:
            try:
                from sentence_transformers import CrossEncoder  # type: ignore[import-not-found]
            except ImportError as exc:
                raise ConfigError("the cross-encoder reranker needs the `sentence-transformers` package "
                                  "(pip install sentence-transformers)") from exc
            loader = CrossEncoder
        self.model = loader(str(path))
        self.top_n = top_n
        self.max_chars = max_chars

    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]:
        head, tail = hits[: self.top_n], hits[self.top_n:]
        if not head:
            return hits
        pairs = [(query.all_text, h.chunk.text[: self.max_chars]) for h in head]
        scores = self.model.predict(pairs)  # type: ignore[attr-defined]
        rescored = [h.model_copy(update={"score": float(s)}) for h, s in zip(head, scores, strict=True)]
        rescored.sort(key=lambda h: -h.score)
        floor = min((h.score for h in rescored), default=0.0)
        return rescored + [h.model_copy(update={"score": floor - 1 - i}) for i, h in enumerate(tail)]


# Asks for an order, not scores: listwise ranking (RankGPT-style) is what LLMs do reliably; passages are cut
# short because the title and first sentences decide relevance for statutes.
LISTWISE_PROMPT = """\
당신은 규정·법령 검색 결과의 순위를 매기는 도우미입니다. 질문에 답하는 데 필요한 조문일수록 앞에 오도록
조문 번호를 관련성 높은 순서로 record_result 도구로 주세요. 관련 없는 조문은 빼도 됩니다. 번호만 쓰세요."""

LISTWISE_SCHEMA = {
    "type": "object",
    "properties": {"order": {"type": "array", "items": {"type": "integer"}}},
    "required": ["order"],
}


class _ListwiseReply(BaseModel):
    order: list[int] = Field(default_factory=list)


class LlmListwiseReranker:
    """One fast-model call orders the top candidates; on any LLM failure the fallback's order stands."""

    def __init__(self, llm: LlmProvider, *, fallback: Reranker, top_n: int = 12, passage_chars: int = 300,
                 timeout_s: float = 8.0, prompt: str = LISTWISE_PROMPT) -> None:
        if top_n < 2:
            raise ValueError("top_n must be at least 2")
        self.llm = llm
        self.fallback = fallback
        self.top_n = top_n
        self.passage_chars = passage_chars
        self.timeout_s = timeout_s
        self.prompt = prompt

    def rerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]:
        return self.fallback.rerank(query, hits)

    async def arerank(self, query: AnalyzedQuery, hits: list[Hit]) -> list[Hit]:
        ordered = self.fallback.rerank(query, hits)
        head, tail = ordered[: self.top_n], ordered[self.top_n:]
        if len(head) < 2 or not self.llm.available:
            return ordered
        message = Message(role=Role.USER, content=self._message(query, head))
        request = LlmRequest(system=self.prompt, messages=(message,), json_schema=LISTWISE_SCHEMA, max_tokens=200,
                             timeout_s=self.timeout_s)
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self.llm.complete(request)
            reply = _ListwiseReply.model_validate(response.data or {})
        except (LlmUnavailable, TimeoutError, ValidationError) as exc:
            log.warning("listwise rerank skipped: %s", exc.__class__.__name__)
            return ordered
        return reorder(head, [n - 1 for n in reply.order]) + tail

    def _message(self, query: AnalyzedQuery, hits: Sequence[Hit]) -> str:
        passages = []
        for number, hit in enumerate(hits, start=1):
            chunk = hit.chunk
            passages.append(f"[{number}] {chunk.text[: self.passage_chars]}")
        return "조문:\n\n" + "\n\n".join(passages) + f"\n\n질문: {query.all_text}"


def reorder(hits: Sequence[Hit], order: Sequence[int]) -> list[Hit]:
    """`hits` in the given order (0-based positions; unknown or repeated ones ignored), the rest after them in
    their old order. Scores are rewritten to keep the list sorted."""
    picked: list[int] = []
    for position in order:
        if 0 <= position < len(hits) and position not in picked:
            picked.append(position)
    picked += [i for i in range(len(hits)) if i not in picked]
    top = max((h.score for h in hits), default=1.0)
    return [hits[i].model_copy(update={"score": top + len(picked) - rank}) for rank, i in enumerate(picked)]
