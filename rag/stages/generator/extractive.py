"""ExtractiveGenerator: the offline answer, quoted.

One or two sentences from the best evidence that answer the question lead, each cited; at most three supporting
quotes follow. It is also the LLM generator's fallback when the LLM is down.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable

from rag import messages
from rag.lang import FOREIGN, framing_for
from rag.lang.asks import QuestionFacets, QuestionReader
from rag.lang.quantities import FIGURE
from rag.lang.sanctions import STATES_SANCTION
from rag.lang.sentences import AMENDMENT_NOTE
from rag.models import CIRCLED, Citation, Hit, cite_chunk, split_paragraphs
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.config import StageTuning
from rag.stages.contracts import DraftAnswer, GenerationEvent, GenerationInput
from rag.stages.generator.lead import LeadCandidate, choose_leads, lead_candidates, term_overlap


class ExtractiveGenerator:
    """Answer first, offline: one or two sentences from the best evidence that answer the question (the one that
    carries the figure, condition or deadline asked for), each cited, then at most three supporting quotes ordered
    by how directly they answer. Articles that share no content with the question stay out of the answer (the
    follow-up suggester may still offer them). Its knobs and the lead's weights are `StageTuning`'s."""

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, analyzer: QueryAnalyzer | None = None,
                 tuning: StageTuning | None = None, reader: QuestionReader | None = None) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.analyzer = analyzer
        self.tuning = tuning or StageTuning()
        # Reads what a question asks when the request carries no facets (a caller without the understanding).
        self.reader = reader or (analyzer.reader if analyzer is not None else QuestionReader())
        # Called with (generator, request, parts, each part's (question, words, ranked paragraphs, facets)) before
        # the lead is chosen: how the lead's fit records the candidates (None in service).
        self.observer: Callable[..., None] | None = None

    async def run(self, request: GenerationInput) -> AsyncIterator[GenerationEvent]:
        """The answer line by line, then the draft with its citations."""
        draft = self.draft(request)
        for line in draft.text.splitlines(keepends=True):
            yield GenerationEvent.delta(line)
        yield GenerationEvent.done(draft)

    async def revise(self, request: GenerationInput, draft: DraftAnswer,
                     unsupported: tuple[str, ...]) -> DraftAnswer | None:
        """Quotes cannot be rewritten: the verifier removes what it cannot confirm."""
        return None

    def draft(self, request: GenerationInput) -> DraftAnswer:
        foreign = request.language in FOREIGN
        parts = request.sub_questions or (request.korean_query if foreign and request.korean_query
                                          else request.question,)
        # The lead stays one or two sentences in all: one per part when the question has several.
        sentences_per_part = self.tuning.lead_sentences if len(parts) == 1 else 1
        studied = []  # (part question, its weighted words, ranked paragraphs, what it asks)
        asked = request.asked if len(parts) == 1 and not foreign else ""
        for part_question, hits, asks in zip(parts, request.evidence, self._facets(request, parts, asked),
                                             strict=False):
            terms = self._terms(part_question, asked)
            ranked = self.ranked_paragraphs(part_question, terms, hits[: self.tuning.hits_per_part], asks)
            if ranked:
                studied.append((part_question, terms, ranked, asks))
        if self.observer is not None:  # benchmarks/lead_fit.py records the lead's candidates here
            self.observer(self, request, parts, studied)
        leads = choose_leads([(self.lead_candidates(terms, ranked, asks), terms, asks)
                              for _, terms, ranked, asks in studied], self.tuning, sentences_per_part)
        answered = [(part_question, ranked, [(c.shown, c.hit, c.marker, c.text) for c in lead])
                    for (part_question, _, ranked, _), lead in zip(studied, leads, strict=True)]
        return compose(request, parts, answered, self.tuning)

    def _facets(self, request: GenerationInput, parts: tuple[str, ...], asked: str) -> tuple[QuestionFacets, ...]:
        """What each part asks: the understanding's reading when the request carries it, else read here."""
        facets = request.facets
        if facets is not None:
            read = facets.parts if request.sub_questions else (facets,)
            if len(read) == len(parts):
                return read
        return tuple(self.reader.read(part, asked=asked) for part in parts)

    def ranked_paragraphs(self, question: str, terms: dict[str, float], hits: tuple[Hit, ...] | list[Hit],
                          facets: QuestionFacets | None = None) -> list[tuple[float, Hit, str, str]]:
        """(score, hit, 항 marker, text) of the paragraphs that share content with the question (`terms`, its
        weighted words), best first; a paragraph far below the best one (related, not answering) is left out."""
        facets = facets or self.reader.read(question)
        asks_figure, asks_sanction = facets.figure, facets.sanction
        scored: list[tuple[float, Hit, str, str]] = []
        for rank, hit in enumerate(hits):
            paragraphs = split_paragraphs(hit.chunk.text)
            if not paragraphs:
                continue
            tokens = self.tokenizer.tokens_many([t for _, t in paragraphs])
            prior = 1.0 / (1.0 + 0.3 * rank)  # the retriever's order (lexical, dense, priors) counts most
            for (marker, text), found in zip(paragraphs, tokens, strict=True):
                # A long paragraph (a list of items) holds more of the question's words without answering more.
                overlap = term_overlap(terms, set(found)) / math.sqrt(max(1.0, len(found) / 40))
                if overlap <= 0:
                    continue
                bonus = self.tuning.quote_figure_weight if asks_figure and FIGURE.search(text) else 1.0
                if asks_sanction and STATES_SANCTION.search(text):
                    bonus *= self.tuning.quote_sanction_weight
                scored.append((overlap * bonus * prior, hit, marker, text))
        scored.sort(key=lambda item: -item[0])
        if not scored:
            return []
        best = scored[0][0]
        kept = [item for item in scored if item[0] >= self.tuning.min_relative_score * best]
        per_hit: dict[str, int] = {}
        out = []
        for item in kept:
            chunk_id = item[1].chunk.chunk_id
            if per_hit.get(chunk_id, 0) < self.tuning.paragraphs_per_hit:
                per_hit[chunk_id] = per_hit.get(chunk_id, 0) + 1
                out.append(item)
        return out

    def lead_candidates(self, terms: dict[str, float], ranked: list[tuple[float, Hit, str, str]],
                        facets: QuestionFacets) -> list[LeadCandidate]:
        """The sentences that may lead (`lead.py`): from the best paragraphs, those carrying what is asked (a
        figure, a condition, a deadline, a definition — `facets`, read from the user's own words) and question
        words; `choose_leads` picks among them."""
        return lead_candidates(self.tokenizer, terms, ranked, facets, max_chars=self.tuning.max_lead_chars,
                               depth=self.tuning.figure_lead_depth)

    def _terms(self, question: str, asked: str = "") -> dict[str, float]:
        """Question word → weight (IDF); the synonym table's regulation terms for its colloquial words count less,
        and so do words borrowed from the conversation when `asked` is what the user said."""
        # A bare number ("3" of "3일") is no topic word: its figure with the unit is the term.
        terms = {t: self.corpus.idf(t) for t in self.tokenizer.tokens(question)
                 if (len(t) > 1 or t[:1].isdigit()) and not t.isdigit()}
        if self.analyzer is not None:
            for token, share in self.analyzer.analyze(question).weighted_tokens().items():
                if not token.isdigit():
                    terms.setdefault(token, 0.6 * share * self.corpus.idf(token))
        if asked:
            own = set(self.tokenizer.tokens(asked))
            if self.analyzer is not None:
                own.update(self.analyzer.analyze(asked).expansion)
            terms = {t: w if t in own else self.tuning.borrowed_word_weight * w for t, w in terms.items()}
        return terms




def compose(request: GenerationInput, parts: tuple[str, ...] | list[str],
            answered: list[tuple[str, list[tuple[float, Hit, str, str]], list[tuple[str, Hit, str, str]]]],
            tuning: StageTuning) -> DraftAnswer:
    """The answer from each part's ranked paragraphs and lead: the leads, then the supporting quotes, each cited
    (markers numbered in reading order: every lead first, then the quotes)."""
    citations: list[Citation] = []

    def cite(hit: Hit, marker: str, text: str) -> Citation:
        existing = next((c for c in citations if c.chunk_id == hit.chunk.chunk_id and c.paragraph == marker), None)
        if existing is not None:
            return existing
        citation = cite_chunk(hit.chunk, index=len(citations) + 1, paragraph=marker,
                              quote=quote_text(text, tuning.max_quote_chars))
        citations.append(citation)
        return citation

    foreign = request.language in FOREIGN
    # Each part of a compound question is a question of its own: two quotes each (three for a single question).
    quotes_per_part = tuning.max_quotes if len(parts) == 1 else max(1, tuning.max_quotes - 1)
    leads = [" ".join(f"{sentence} [{cite(hit, marker, text).index}]" for sentence, hit, marker, text in lead)
             for _, _, lead in answered if lead]
    support: list[str] = []
    for part_question, ranked, _ in answered:
        if len(parts) > 1:
            support.append(messages.EXTRACTIVE_PART.format(question=part_question))
        for _, hit, marker, text in in_article_order(ranked[:quotes_per_part]):
            citation = cite(hit, marker, text)
            support.append(f"- **{citation.label}**: \"{citation.quote}\" [{citation.index}]")
    if not leads and not support:
        return DraftAnswer(text="", citations=())
    if foreign:
        # Framed in the asker's language, each lead sentence quoted in Korean with its reference.
        framing = framing_for(request.language)
        about = framing.ANSWER_ABOUT.format(topics=", ".join(request.topics[:3])) if request.topics else ""
        quoted = [framing.ANSWER_QUOTE.format(label=cite(hit, marker, text).label, quote=sentence)
                  + f" [{cite(hit, marker, text).index}]"
                  for _, _, lead in answered for sentence, hit, marker, text in lead]
        lines = [framing.ANSWER_LEAD.format(about=about), *quoted, "", framing.EXTRACTIVE_SUPPORT,
                 *dict.fromkeys(support), "", framing.ANSWER_HELP]
        return DraftAnswer(text="\n".join(lines).strip() + "\n", citations=tuple(citations))
    lines = [*leads, "", messages.EXTRACTIVE_SUPPORT, *dict.fromkeys(support)]
    return DraftAnswer(text="\n".join(lines).strip() + "\n", citations=tuple(citations))


def in_article_order(quotes: list[tuple[float, Hit, str, str]]) -> list[tuple[float, Hit, str, str]]:
    """The chosen quotes with each article's paragraphs in their own order (① before ②); articles stay in the
    order of their best paragraph."""
    first = {}
    for position, (_, hit, _, _) in enumerate(quotes):
        first.setdefault(hit.chunk.chunk_id, position)
    return sorted(quotes, key=lambda q: (first[q[1].chunk.chunk_id], CIRCLED.find(q[2]) if q[2] else -1))


def quote_text(text: str, limit: int = 300) -> str:
    """One line of quotable text: amendment notes dropped, cut at `limit` characters with an ellipsis."""
    text = AMENDMENT_NOTE.sub("", text).replace("\n", " ").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "…"
