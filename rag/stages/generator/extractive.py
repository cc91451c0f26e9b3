"""ExtractiveGenerator: the offline answer, quoted.

One or two sentences from the best evidence that answer the question lead, each cited; at most three supporting
quotes follow. It is also the LLM generator's fallback when the LLM is down.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator

from rag import messages
from rag.lang import FOREIGN, framing_for
from rag.lang.asks import QuestionFacets, QuestionReader
from rag.lang.quantities import FIGURE, STATED_CONDITION, numeric_conditions
from rag.lang.sanctions import STATES_SANCTION
from rag.lang.sentences import (
    AMENDMENT_NOTE,
    ANNOUNCES_ITEMS,
    DEFINITION,
    ITEM_START,
    PROVISO,
    PROVISO_OPENERS,
    SENTENCE_END,
    STATES_LIMIT,
)
from rag.models import CIRCLED, Citation, Hit, cite_chunk, split_paragraphs
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.config import StageTuning
from rag.stages.contracts import DraftAnswer, GenerationEvent, GenerationInput


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
        citations: list[Citation] = []

        def cite(hit: Hit, marker: str, text: str) -> Citation:
            existing = next((c for c in citations if c.chunk_id == hit.chunk.chunk_id and c.paragraph == marker), None)
            if existing is not None:
                return existing
            citation = cite_chunk(hit.chunk, index=len(citations) + 1, paragraph=marker,
                                  quote=quote_text(text, self.tuning.max_quote_chars))
            citations.append(citation)
            return citation

        foreign = request.language in FOREIGN
        parts = request.sub_questions or (request.korean_query if foreign and request.korean_query
                                          else request.question,)
        # Each part of a compound question is a question of its own: two quotes each (three for a single question).
        quotes_per_part = self.tuning.max_quotes if len(parts) == 1 else max(1, self.tuning.max_quotes - 1)
        # The lead stays one or two sentences in all: one per part when the question has several.
        sentences_per_part = self.tuning.lead_sentences if len(parts) == 1 else 1
        answered = []  # (part question, ranked paragraphs, lead sentences), read in this order
        asked = request.asked if len(parts) == 1 and not foreign else ""
        for part_question, hits, asks in zip(parts, request.evidence, self._facets(request, parts, asked),
                                             strict=False):
            terms = self._terms(part_question, asked)
            ranked = self.ranked_paragraphs(part_question, terms, hits[: self.tuning.hits_per_part], asks)
            if ranked:
                answered.append((part_question, ranked, self.lead(part_question, terms, ranked, sentences_per_part,
                                                                  asked=asked, facets=asks)))
        # Markers are numbered in reading order: every lead first, then the quotes.
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
                overlap = _overlap(terms, set(found)) / math.sqrt(max(1.0, len(found) / 40))
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

    def lead(self, question: str, terms: dict[str, float], ranked: list[tuple[float, Hit, str, str]],
             at_most: int | None = None, *, asked: str = "",
             facets: QuestionFacets | None = None) -> list[tuple[str, Hit, str, str]]:
        """The sentence(s) that answer: from the best paragraphs, the one carrying what is asked (a figure, a
        condition, a deadline, a definition) and the most question words; a second one from another paragraph
        only when it answers question words the first leaves out."""
        # What is asked (rag/lang/asks.py); the amount and its units in the user's own words (a follow-up's, not
        # the earlier question's): "며칠" → days.
        facets = facets or self.reader.read(question, asked=asked)
        asks_figure, asks_meaning, asks_limit = facets.figure, facets.meaning, facets.limit
        asks_sanction, asks_list, asks_amount = facets.sanction, facets.listing, facets.amount
        conditions = set(facets.conditions)  # "1년 지나면": (1, 년, at least)
        contradictions = {(n, unit, not more) for n, unit, more in conditions}
        asked_units = facets.stated_units
        pool = ranked[:3]
        # A figure asked for (며칠/얼마/몇, or a unit such as a deadline's) is answered by a paragraph stating it,
        # which may rank a little lower than ones that only mention it.
        asks_stated = asks_amount or bool(asked_units)
        if asks_stated:
            pool += [r for r in ranked[3:self.tuning.figure_lead_depth]
                     if (asked_units and any(u.search(r[3]) for u in asked_units))
                     or (not asked_units and FIGURE.search(r[3]))]
        candidates: list[tuple[float, float, frozenset[str], str, Hit, str, str]] = []
        for position, (_, hit, marker, text) in enumerate(pool):
            sentences = _sentences(text)
            # (order, what is matched, what is shown): each provision, without a proviso ("다만, …") that shares
            # no word with the question (the quote below has it), so that a lead stays one clause; and where the
            # proviso states the figure or limit asked for, that proviso on its own, matched as the provision it
            # qualifies: the limit is often the proviso of a long sentence that announces a list.
            provisos = [(PROVISO.findall(sentence) or [""])[0] for sentence in sentences]
            present = [p for p in provisos if p]
            related = {p: _overlap(terms, set(found)) > 0
                       for p, found in zip(present, self.tokenizer.tokens_many(present), strict=True)}
            units = []
            for order, sentence in enumerate(sentences):
                shown = _with_context(sentences, order)
                if provisos[order] and not related[provisos[order]]:
                    shown = PROVISO.sub("", shown, count=1)
                units.append((order, sentence, shown))
            units += [(order, sentences[order], proviso) for order, proviso in enumerate(provisos)
                      if (asks_figure and FIGURE.search(proviso)) or (asks_limit and STATES_LIMIT.search(proviso))]
            tokens = self.tokenizer.tokens_many([scored for _, scored, _ in units]) if units else []
            for (order, _, context), found in zip(units, tokens, strict=True):
                # Words are matched in the provision itself; what is asked must be in what the reader is shown.
                shown = _lead_text(context, self.tuning.max_lead_chars)
                weight = max(0.5, 1.0 - 0.2 * position) * max(0.7, 1.0 - 0.03 * order)
                if asks_figure and FIGURE.search(shown):
                    weight *= self.tuning.lead_figure_weight
                if asks_meaning and DEFINITION.search(shown):
                    weight *= self.tuning.lead_definition_weight
                if asks_limit and STATES_LIMIT.search(shown):
                    weight *= self.tuning.lead_limit_weight
                if asks_sanction and STATES_SANCTION.search(shown):
                    weight *= self.tuning.lead_sanction_weight
                if asks_list and ANNOUNCES_ITEMS.search(shown):
                    weight *= self.tuning.lead_list_weight
                if conditions:
                    stated = numeric_conditions(shown, STATED_CONDITION)
                    beyond = any(more and asked_more and unit == asked_unit and int(n) > int(asked_n)
                                 for n, unit, more in stated for asked_n, asked_unit, asked_more in conditions)
                    if stated & contradictions or beyond:
                        # "1년 미만" does not answer "1년 지나면", nor does "3년 이상" (a later threshold)
                        weight *= self.tuning.lead_condition_missed_weight
                    elif stated & conditions:
                        weight *= self.tuning.lead_condition_met_weight  # "1년 미만" answers "아직 1년 안 됐으면"
                weight /= 1.0 + max(0, len(shown) - 120) / 200  # a lead is read first: shorter answers sooner
                score = _overlap(terms, set(found)) * weight
                if score > 0:
                    candidates.append((score, weight, frozenset(found), shown, hit, marker, text))
        candidates.sort(key=lambda c: -c[0])
        if not candidates:
            return []
        best = candidates[0]
        if asks_stated:
            # "며칠/얼마/몇" is answered by a figure (in the unit asked, when one is): a sentence without one never
            # leads while another states it.
            stating = [c for c in candidates if any(u.search(c[3]) for u in asked_units)] or \
                [c for c in candidates if FIGURE.search(c[3])]
            best = stating[0] if stating else best
        chosen = [(best[3], best[4], best[5], best[6])]
        # A second sentence when it answers nearly as well, or answers what the first leaves out (a question
        # about two things); never a second quote of the same paragraph.
        uncovered = {t: w for t, w in terms.items() if t not in best[2]}
        others = [c for c in candidates[1:] if (c[4].chunk.chunk_id, c[5]) != (best[4].chunk.chunk_id, best[5])]
        close = next((c for c in others if c[0] >= 0.8 * best[0]), None)
        complement = max(others, key=lambda c: _overlap(uncovered, set(c[2])) * c[1], default=None)
        if close is None and complement is not None and \
                _overlap(uncovered, set(complement[2])) * complement[1] >= self.tuning.second_lead_share * best[0]:
            close = complement
        if (self.tuning.lead_sentences if at_most is None else at_most) > 1 and close is not None:
            chosen.append((close[3], close[4], close[5], close[6]))
        return chosen

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




def in_article_order(quotes: list[tuple[float, Hit, str, str]]) -> list[tuple[float, Hit, str, str]]:
    """The chosen quotes with each article's paragraphs in their own order (① before ②); articles stay in the
    order of their best paragraph."""
    first = {}
    for position, (_, hit, _, _) in enumerate(quotes):
        first.setdefault(hit.chunk.chunk_id, position)
    return sorted(quotes, key=lambda q: (first[q[1].chunk.chunk_id], CIRCLED.find(q[2]) if q[2] else -1))


_PARAGRAPH_MARK = re.compile(rf"^[{CIRCLED}]\s*")


def _overlap(terms: dict[str, float], found: set[str]) -> float:
    """Weight of the terms `found` holds. A figure of the question ("3일은 안 돼?") is the value being checked, not a
    topic word: a figure in its unit ("2일") answers it as well as the same figure."""
    units = {_unit(t) for t in found if t[:1].isdigit()} - {""}
    return sum(w for t, w in terms.items() if t in found or (t[:1].isdigit() and _unit(t) in units))


def _unit(token: str) -> str:
    """The unit of a figure token ("3일" → "일"); "" for a bare number."""
    return token.lstrip("0123456789.,")


def _sentences(paragraph: str) -> list[str]:
    """A paragraph's provisions, amendment notes dropped: each sentence with its proviso ("다만, …", "이 경우 …"),
    each item."""
    text = AMENDMENT_NOTE.sub("", paragraph)
    units: list[str] = []
    for piece in (s.strip() for s in SENTENCE_END.split(text)):
        if not piece:
            continue
        # A proviso or its elaboration reads with its sentence, and so does the rest of a sentence whose
        # parenthesis ended in "…포함한다. 이하 이 조에서 같다)": a sentence never ends inside brackets.
        if units and (piece.startswith(PROVISO_OPENERS) or units[-1].count("(") > units[-1].count(")")):
            units[-1] = f"{units[-1]} {piece}"
        else:
            units.append(piece)
    return units


def _with_context(units: list[str], index: int) -> str:
    """A provision as a reader needs it: an item with the sentence that announces its list, a sentence that
    announces a list with the items that follow."""
    unit = units[index]
    if ITEM_START.match(unit):
        head = next((units[i] for i in range(index - 1, -1, -1) if not ITEM_START.match(units[i])), "")
        return f"{head} {unit}" if head and ANNOUNCES_ITEMS.search(head) else unit
    if ANNOUNCES_ITEMS.search(unit):
        items = [u for u in units[index + 1:] if ITEM_START.match(u)]
        return " ".join([unit, *items])
    return unit


def _lead_text(sentence: str, limit: int) -> str:
    """A sentence as the answer's lead: without its 항 mark, cut at `limit` characters."""
    sentence = _PARAGRAPH_MARK.sub("", sentence).strip()
    return sentence if len(sentence) <= limit else sentence[:limit].rstrip() + "…"



def quote_text(text: str, limit: int = 300) -> str:
    """One line of quotable text: amendment notes dropped, cut at `limit` characters with an ellipsis."""
    text = AMENDMENT_NOTE.sub("", text).replace("\n", " ").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "…"
