"""LlmGenerator: streams a cited answer from the strong model, with tools, over the extractive answer.

Every claim cites a numbered source ([n]); the sources list is built from the markers the answer used, and
follow-up questions ride at the end of the same call (hidden from the stream), so suggesting them costs no extra
call.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable

from rag import messages
from rag.lang import FOREIGN, framing_for
from rag.llm import (
    UNTRUSTED_TEXT_RULE,
    LlmProvider,
    LlmRequest,
    LlmStreamInterrupted,
    LlmUnavailable,
    ToolCall,
    ToolExchange,
    current_llm_call_budget,
    fence,
)
from rag.llm.untrusted import neutralise
from rag.models import CITATION_MARKER, Citation, Hit, Message, Role, cite_chunk, split_paragraphs
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.agent_tools import AgentTools
from rag.stages.contracts import DraftAnswer, GenerationEvent, GenerationInput, NumberedSource
from rag.stages.generator.extractive import ExtractiveGenerator, quote_text
from rag.stages.generator.followup_block import FollowupSplitter, split_off_followups
from rag.stages.generator.prompts import (
    GENERATE_PROMPT,
    NO_PART_SOURCES,
    NO_TOOL_RESULT,
    PART_LINE,
    PARTS_INSTRUCTION,
    REVISE_INSTRUCTION,
    STYLE_HINTS,
    TOOLS_INSTRUCTION,
)

log = logging.getLogger(__name__)

_MARKER = CITATION_MARKER
_MARKER_LIST = re.compile(r"\[(\d+(?:\s*,\s*\d+)+)\]")


def number_sources(request: GenerationInput, *, per_part: int = 5, limit: int = 12) -> list[NumberedSource]:
    """Number the evidence 1..n, part by part, each chunk once (a chunk two parts share keeps one number)."""
    numbered: dict[str, NumberedSource] = {}
    for part, hits in enumerate(request.evidence):
        for hit in hits[:per_part]:
            known = numbered.get(hit.chunk.chunk_id)
            if known is not None:
                numbered[hit.chunk.chunk_id] = known.model_copy(update={"parts": (*known.parts, part)})
            elif len(numbered) < limit:
                numbered[hit.chunk.chunk_id] = NumberedSource(index=len(numbered) + 1, hit=hit, parts=(part,))
    return list(numbered.values())



def expand_marker_lists(text: str) -> str:
    """[1, 3] → [1][3], the one marker form the verifier and the sources list read."""
    return _MARKER_LIST.sub(lambda m: "".join(f"[{n.strip()}]" for n in m.group(1).split(",")), text)



class _Answering:
    """What one answer accumulates while it streams: the numbered sources (tools add more), the text shown."""

    def __init__(self, sources: list[NumberedSource]) -> None:
        self.sources = sources
        self.shown: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.shown)

    def show(self, visible: str) -> GenerationEvent | None:
        """The visible text as an event: leading whitespace is dropped until the answer starts."""
        if not self.text.strip():
            visible = visible.lstrip()
        if not visible:
            return None
        self.shown.append(visible)
        return GenerationEvent.delta(visible)


class LlmGenerator:
    """Streams a cited answer from the strong model; the extractive answer (with a note) when the LLM is down.

    Stateless between turns: each `run` keeps its own sources and text, and its last event carries the draft. A
    failure before the first visible text, or a stream with no answer text, switches to the fallback; a failure
    after it keeps what was shown and adds `messages.STREAM_INTERRUPTED`. With `tools`, the model may consult
    them for up to `max_tool_rounds` rounds (each round is one call of the turn's budget); their results become
    further numbered sources. Hangs are detected by the provider (`hang_timeout_s` for every delta).
    """

    def __init__(self, llm: LlmProvider, *, fallback: ExtractiveGenerator, tokenizer: Tokenizer,
                 hang_timeout_s: float = 8.0, max_tokens: int = 1500, source_chars: int = 1500,
                 tools: AgentTools | None = None, max_tool_rounds: int = 2, hold_chars: int = 80,
                 prompt: str = GENERATE_PROMPT) -> None:
        if hang_timeout_s <= 0:
            raise ValueError("hang_timeout_s must be positive")
        if max_tool_rounds < 0:
            raise ValueError("max_tool_rounds must be zero or more")
        self.llm = llm
        self.fallback = fallback
        self.tokenizer = tokenizer
        self.hang_timeout_s = hang_timeout_s
        self.max_tokens = max_tokens
        self.source_chars = source_chars
        self.tools = tools
        self.max_tool_rounds = max_tool_rounds
        self.hold_chars = hold_chars
        self.prompt = prompt

    async def run(self, request: GenerationInput) -> AsyncIterator[GenerationEvent]:
        """Answer text as it arrives (status events for tool calls), then the draft; never raises `LlmUnavailable`."""
        turn = _Answering(number_sources(request))
        if not self.llm.available:
            async for event in self._fall_back(request, "the LLM is unavailable (breaker open or budget spent)"):
                yield event
            return
        splitter = FollowupSplitter()
        exchanges: list[ToolExchange] = []
        note = ""
        try:
            for round_number in range(self.max_tool_rounds + 1):
                offer_tools = self._may_offer_tools(round_number)
                held: list[str] = []  # a tool round's text is held back: it may be a preamble to a tool call
                flushing = not offer_tools
                llm_stream = self.llm.stream(self._request(request, turn, exchanges, offer_tools))
                try:
                    async for delta in llm_stream:
                        if not flushing:
                            held.append(delta)
                            so_far = "".join(held)
                            # A citation marker means answer text, not a preamble: show it without waiting.
                            if len(so_far) < self.hold_chars and not _MARKER.search(so_far):
                                continue
                            flushing, delta = True, so_far
                        if shown := turn.show(splitter.feed(delta)):
                            yield shown
                except LlmStreamInterrupted:
                    if not flushing:  # it broke before any tool call: what was held is answer text
                        if shown := turn.show(splitter.feed("".join(held))):
                            yield shown
                    raise
                finally:
                    await llm_stream.aclose()
                response = llm_stream.response
                calls = response.tool_calls if (response is not None and offer_tools) else ()
                if not calls:
                    if not flushing and (shown := turn.show(splitter.feed("".join(held)))):
                        yield shown
                    break
                results: list[str] = []
                for call in calls[:3]:
                    yield GenerationEvent.status(self.tools.status(call))  # type: ignore[union-attr]
                    results.append(await self._run_tool(call, request, turn))
                exchanges.append(ToolExchange(text="" if not flushing else response.text, calls=calls[:3],
                                              results=tuple(results)))
            if shown := turn.show(splitter.close()):
                yield shown
        except LlmUnavailable as exc:
            if not turn.text.strip():
                async for event in self._fall_back(request, str(exc)):
                    yield event
                return
            log.warning("answer stream interrupted after %d characters: %s", len(turn.text), exc)
            note = messages.STREAM_INTERRUPTED
        if not turn.text.strip():
            # The model answered nothing the user could read (only follow-ups, or only whitespace).
            async for event in self._fall_back(request, "the answer stream had no text"):
                yield event
            return
        text, loose_followups = split_off_followups(turn.text)
        yield GenerationEvent.done(self._draft(text, turn.sources, followups=splitter.followups or loose_followups,
                                               note=note))

    async def revise(self, request: GenerationInput, draft: DraftAnswer,
                     unsupported: tuple[str, ...]) -> DraftAnswer | None:
        """One rewrite without the unsupported claims (streamed, so a hang is caught); None when it cannot be had."""
        if draft.by != "llm" or not draft.sources or not self.llm.available:
            return None
        listed = "\n".join(f"- {s}" for s in unsupported)
        instruction = REVISE_INSTRUCTION.format(draft=fence("답변", draft.text), unsupported=fence("주장", listed))
        first = self._user_message(request, list(draft.sources))
        user = Message(role=Role.USER, content=f"{first.content}\n\n{instruction}")
        parts: list[str] = []
        revision = self.llm.stream(LlmRequest(system=self.prompt + UNTRUSTED_TEXT_RULE, messages=(user,),
                                              tier="strong", max_tokens=self.max_tokens,
                                              timeout_s=self.hang_timeout_s, stage="revise"))
        try:
            async with asyncio.timeout(self.hang_timeout_s * 4):  # a slow but progressing rewrite is cut here
                async for delta in revision:
                    parts.append(delta)
        except (LlmUnavailable, TimeoutError) as exc:
            log.warning("revision skipped: %s", exc)
            return None
        finally:
            await revision.aclose()
        text, _ = split_off_followups("".join(parts))
        if not text.strip():
            return None
        return self._draft(text, list(draft.sources), followups=draft.followups, note=draft.note)

    def _may_offer_tools(self, round_number: int) -> bool:
        """Tools while rounds remain and the budget keeps a call for the answer after the tool round."""
        if self.tools is None or round_number >= self.max_tool_rounds:
            return False
        budget = current_llm_call_budget()
        return budget is None or budget.remaining >= 2

    def _request(self, request: GenerationInput, turn: _Answering, exchanges: list[ToolExchange],
                 offer_tools: bool) -> LlmRequest:
        system = self.prompt + (TOOLS_INSTRUCTION if self.tools is not None else "") + UNTRUSTED_TEXT_RULE
        return LlmRequest(system=system, messages=(self._user_message(request, turn.sources),), tier="strong",
                          max_tokens=self.max_tokens, timeout_s=self.hang_timeout_s, stage="generate",
                          tools=self.tools.specs if (offer_tools and self.tools is not None) else (),
                          exchanges=tuple(exchanges))

    async def _run_tool(self, call: ToolCall, request: GenerationInput, turn: _Answering) -> str:
        """Run a tool; its chunks join the numbered sources; the result is fenced untrusted text."""
        assert self.tools is not None
        outcome = await self.tools.run(call, request.scope)
        blocks = []
        known = {s.hit.chunk.chunk_id: s for s in turn.sources}
        for chunk in outcome.chunks:
            source = known.get(chunk.chunk_id)
            if source is None:
                source = NumberedSource(index=len(turn.sources) + 1, hit=Hit(chunk=chunk, score=0.0), parts=())
                turn.sources.append(source)
                known[chunk.chunk_id] = source
            blocks.append(self._source_block(source))
        text = "\n\n".join([*blocks, outcome.note] if outcome.note else blocks) or NO_TOOL_RESULT
        return fence("도구 결과", text)

    async def _fall_back(self, request: GenerationInput, reason: str) -> AsyncIterator[GenerationEvent]:
        log.warning("generation falls back to extractive quotes: %s", reason)
        async for event in self.fallback.run(request):
            if event.draft is not None:
                note = framing_for(request.language).OFFLINE_NOTE
                event = GenerationEvent.done(event.draft.model_copy(update={"note": note}))
            yield event

    def _source_block(self, source: NumberedSource) -> str:
        chunk = source.hit.chunk
        title = f"({chunk.title})" if chunk.title and chunk.kind == "article" else ""
        body = chunk.text.split("\n", 1)[-1] if "\n" in chunk.text else chunk.text
        return f"[{source.index}] {chunk.label}{title}\n{body[: self.source_chars]}"

    def _user_message(self, request: GenerationInput, sources: list[NumberedSource]) -> Message:
        evidence = [s for s in sources if s.parts]  # tool results travel in their own rounds
        blocks = "\n\n".join(self._source_block(s) for s in evidence)
        lines = [fence("참고 조문", blocks), "", fence("질문", request.question)]
        if len(request.sub_questions) > 1:
            lines.append(PARTS_INSTRUCTION)
            for part, sub_question in enumerate(request.sub_questions):
                numbers = ", ".join(f"[{s.index}]" for s in evidence if part in s.parts) or NO_PART_SOURCES
                lines.append(PART_LINE.format(number=part + 1, question=neutralise(sub_question), sources=numbers))
        lines.append("\n" + STYLE_HINTS.get(request.answer_style, STYLE_HINTS["concise"]))
        if request.language in FOREIGN:  # explain in the asker's language beside the Korean quote
            lines.append(framing_for(request.language).LLM_LANGUAGE_RULE)
        return Message(role=Role.USER, content="\n".join(lines))

    def _draft(self, text: str, sources: list[NumberedSource], *, followups: tuple[str, ...],
               note: str) -> DraftAnswer:
        text = expand_marker_lists(text).strip() + "\n"
        by_index = {s.index: s for s in sources}
        used = [n for n in dict.fromkeys(int(m) for m in _MARKER.findall(text)) if n in by_index]
        citations = tuple(self._citation(by_index[n], text) for n in used)
        return DraftAnswer(text=text, citations=citations, followups=followups, note=note, by="llm",
                           sources=tuple(sources))

    def _citation(self, source: NumberedSource, text: str) -> Citation:
        marker, quote = self._cited_paragraph(source, text)
        return cite_chunk(source.hit.chunk, index=source.index, paragraph=marker, quote=quote)

    def _cited_paragraph(self, source: NumberedSource, text: str) -> tuple[str, str]:
        """The 항 the citing sentences lean on, when one stands out; else the whole article."""
        paragraphs = split_paragraphs(source.hit.chunk.text)
        fallback_quote = quote_text(" ".join(t for _, t in paragraphs) or source.hit.chunk.text)
        citing = " ".join(s for s in re.split(r"(?<=[.!?。])\s+|\n", text) if f"[{source.index}]" in s)
        found = cited_paragraph(_MARKER.sub("", citing), paragraphs, self.tokenizer, self.fallback.corpus.idf)
        if found is None:
            return "", fallback_quote
        return paragraphs[found][0], quote_text(paragraphs[found][1])


# A 항 is named under a sentence only when it clearly carries the sentence: its weighted overlap at least this
# many times the runner-up's (else the article alone is cited). "15일의 연차를 받아요" shares 근로자/유급휴가/1년 with
# ② as much as with ①; the figure and the rare words tell them apart.
_PARAGRAPH_MARGIN = 1.25
_FIGURE_TOKEN_WEIGHT = 3.0  # a figure ("15일") is the most specific word a sentence can share with its 항


def cited_paragraph(sentence: str, paragraphs: list[tuple[str, str]], tokenizer: Tokenizer,
                    idf: Callable[[str], float]) -> int | None:
    """The position in `paragraphs` of the 항 a sentence quotes or paraphrases, or None when no single 항 stands out (or
    the article has fewer than two). Overlap is IDF-weighted, figures above words, each word once."""
    if len(paragraphs) < 2 or not sentence.strip():
        return None
    words = {t for t in tokenizer.tokens(sentence) if len(t) > 1 or t[:1].isdigit()}
    if not words:
        return None

    def weight(token: str) -> float:
        return idf(token) * (_FIGURE_TOKEN_WEIGHT if token[:1].isdigit() else 1.0)

    scores = [sum(weight(t) for t in words & set(tokens))
              for tokens in tokenizer.tokens_many([t for _, t in paragraphs])]
    ranked = sorted(range(len(paragraphs)), key=lambda i: -scores[i])
    best, second = ranked[0], ranked[1]
    if scores[best] <= 0 or scores[best] < _PARAGRAPH_MARGIN * scores[second] or not paragraphs[best][0]:
        return None
    return best

