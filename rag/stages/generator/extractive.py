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
from rag.models import CIRCLED, Citation, Hit, cite_chunk, split_paragraphs
from rag.quantities import (
    ASKED_CONDITION,
    ASKS_AMOUNT,
    ASKS_FIGURE,
    FIGURE,
    STATED_CONDITION,
    asked_quantities,
    numeric_conditions,
)
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.sanctions import ASKS_SANCTION, STATES_SANCTION
from rag.stages.contracts import DraftAnswer, GenerationEvent, GenerationInput

# Amendment notes inside an article (<개정 2020. 1. 1.>, <신설 …>): history, not content to quote.
_AMENDMENT_NOTE = re.compile(r"(?<!\s)\s*+<(개정|신설)[^<>]*>")  # from a blank run's start: linear


class ExtractiveGenerator:
    """Answer first, offline: one or two sentences from the best evidence that answer the question (the one that
    carries the figure, condition or deadline asked for), each cited, then at most three supporting quotes ordered
    by how directly they answer. Articles that share no content with the question stay out of the answer (the
    follow-up suggester may still offer them)."""

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, analyzer: QueryAnalyzer | None = None,
                 hits_per_part: int = 5, paragraphs_per_hit: int = 3, max_quote_chars: int = 400,
                 max_quotes: int = 3, lead_sentences: int = 2, max_lead_chars: int = 220,
                 min_relative_score: float = 0.3, second_lead_share: float = 0.35) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.analyzer = analyzer
        self.hits_per_part = hits_per_part
        self.paragraphs_per_hit = paragraphs_per_hit
        self.max_quote_chars = max_quote_chars
        self.max_quotes = max_quotes
        self.lead_sentences = lead_sentences
        self.max_lead_chars = max_lead_chars
        self.min_relative_score = min_relative_score
        self.second_lead_share = second_lead_share

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
                                  quote=quote_text(text, self.max_quote_chars))
            citations.append(citation)
            return citation

        foreign = request.language in FOREIGN
        parts = request.sub_questions or (request.korean_query if foreign and request.korean_query
                                          else request.question,)
        # Each part of a compound question is a question of its own: two quotes each (three for a single question).
        quotes_per_part = self.max_quotes if len(parts) == 1 else max(1, self.max_quotes - 1)
        # The lead stays one or two sentences in all: one per part when the question has several.
        sentences_per_part = self.lead_sentences if len(parts) == 1 else 1
        answered = []  # (part question, ranked paragraphs, lead sentences), read in this order
        asked = request.asked if len(parts) == 1 and not foreign else ""
        for part_question, hits in zip(parts, request.evidence, strict=False):
            terms = self._terms(part_question, asked)
            ranked = self.ranked_paragraphs(part_question, terms, hits[: self.hits_per_part])
            if ranked:
                answered.append((part_question, ranked,
                                 self.lead(part_question, terms, ranked, sentences_per_part, asked=asked)))
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

    def ranked_paragraphs(self, question: str, terms: dict[str, float], hits: tuple[Hit, ...] | list[Hit]
                          ) -> list[tuple[float, Hit, str, str]]:
        """(score, hit, 항 marker, text) of the paragraphs that share content with the question (`terms`, its
        weighted words), best first; a paragraph far below the best one (related, not answering) is left out."""
        asks_figure = bool(ASKS_FIGURE.search(question))
        asks_sanction = bool(ASKS_SANCTION.search(question))
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
                bonus = 1.3 if asks_figure and FIGURE.search(text) else 1.0
                if asks_sanction and STATES_SANCTION.search(text):
                    bonus *= 1.5
                scored.append((overlap * bonus * prior, hit, marker, text))
        scored.sort(key=lambda item: -item[0])
        if not scored:
            return []
        best = scored[0][0]
        kept = [item for item in scored if item[0] >= self.min_relative_score * best]
        per_hit: dict[str, int] = {}
        out = []
        for item in kept:
            chunk_id = item[1].chunk.chunk_id
            if per_hit.get(chunk_id, 0) < self.paragraphs_per_hit:
                per_hit[chunk_id] = per_hit.get(chunk_id, 0) + 1
                out.append(item)
        return out

    def lead(self, question: str, terms: dict[str, float], ranked: list[tuple[float, Hit, str, str]],
             at_most: int | None = None, *, asked: str = "") -> list[tuple[str, Hit, str, str]]:
        """The sentence(s) that answer: from the best paragraphs, the one carrying what is asked (a figure, a
        condition, a deadline, a definition) and the most question words; a second one from another paragraph
        only when it answers question words the first leaves out."""
        asks_figure = bool(ASKS_FIGURE.search(question))
        asks_meaning = bool(_ASKS_MEANING.search(question))
        asks_limit = bool(_ASKS_LIMIT.search(question))
        asks_sanction = bool(ASKS_SANCTION.search(question))
        asks_list = bool(_ASKS_LIST.search(question))
        conditions = numeric_conditions(question, ASKED_CONDITION)  # "1년 지나면": (1, 년, at least)
        contradictions = {(n, unit, not more) for n, unit, more in conditions}
        # What the user asked in their own words (a follow-up's, not the earlier question's): "며칠" → days.
        asked_units = asked_quantities(asked or question)
        asks_amount = bool(ASKS_AMOUNT.search(asked or question))
        pool = ranked[:3]
        if asks_amount:  # the paragraph stating the figure may rank a little lower than ones that only mention it
            pool += [r for r in ranked[3:_FIGURE_LEAD_DEPTH]
                     if (asked_units and any(u.search(r[3]) for u in asked_units))
                     or (not asked_units and FIGURE.search(r[3]))]
        candidates: list[tuple[float, float, frozenset[str], str, Hit, str, str]] = []
        for position, (_, hit, marker, text) in enumerate(pool):
            sentences = _sentences(text)
            # (order, what is matched, what is shown): each provision, without a proviso ("다만, …") that shares
            # no word with the question (the quote below has it), so that a lead stays one clause; and where the
            # proviso states the figure or limit asked for, that proviso on its own, matched as the provision it
            # qualifies: the limit is often the proviso of a long sentence that announces a list.
            provisos = [(_PROVISO.findall(sentence) or [""])[0] for sentence in sentences]
            present = [p for p in provisos if p]
            related = {p: _overlap(terms, set(found)) > 0
                       for p, found in zip(present, self.tokenizer.tokens_many(present), strict=True)}
            units = []
            for order, sentence in enumerate(sentences):
                shown = _with_context(sentences, order)
                if provisos[order] and not related[provisos[order]]:
                    shown = _PROVISO.sub("", shown, count=1)
                units.append((order, sentence, shown))
            units += [(order, sentences[order], proviso) for order, proviso in enumerate(provisos)
                      if (asks_figure and FIGURE.search(proviso)) or (asks_limit and _STATES_LIMIT.search(proviso))]
            tokens = self.tokenizer.tokens_many([scored for _, scored, _ in units]) if units else []
            for (order, _, context), found in zip(units, tokens, strict=True):
                # Words are matched in the provision itself; what is asked must be in what the reader is shown.
                shown = _lead_text(context, self.max_lead_chars)
                weight = max(0.5, 1.0 - 0.2 * position) * max(0.7, 1.0 - 0.03 * order)
                if asks_figure and FIGURE.search(shown):
                    weight *= 1.5
                if asks_meaning and _DEFINITION.search(shown):
                    weight *= 1.5
                if asks_limit and _STATES_LIMIT.search(shown):
                    weight *= 1.3
                if asks_sanction and STATES_SANCTION.search(shown):
                    weight *= 1.5
                if asks_list and _ANNOUNCES_ITEMS.search(shown):
                    weight *= 2.0  # dev + held-out-1..9: 1.3 and 1.5 moved no item, 2.0 two
                if conditions:
                    stated = numeric_conditions(shown, STATED_CONDITION)
                    beyond = any(more and asked_more and unit == asked_unit and int(n) > int(asked_n)
                                 for n, unit, more in stated for asked_n, asked_unit, asked_more in conditions)
                    if stated & contradictions or beyond:
                        # "1년 미만" does not answer "1년 지나면", nor does "3년 이상" (a later threshold)
                        weight *= 0.5
                    elif stated & conditions:
                        weight *= 1.3  # "1년 미만" answers "아직 1년 안 됐으면"
                weight /= 1.0 + max(0, len(shown) - 120) / 200  # a lead is read first: shorter answers sooner
                score = _overlap(terms, set(found)) * weight
                if score > 0:
                    candidates.append((score, weight, frozenset(found), shown, hit, marker, text))
        candidates.sort(key=lambda c: -c[0])
        if not candidates:
            return []
        best = candidates[0]
        if asks_amount:
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
                _overlap(uncovered, set(complement[2])) * complement[1] >= self.second_lead_share * best[0]:
            close = complement
        if (self.lead_sentences if at_most is None else at_most) > 1 and close is not None:
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
            terms = {t: w if t in own else _BORROWED_WEIGHT * w for t, w in terms.items()}
        return terms


# How deep the lead looks for the paragraph stating the figure a "며칠/얼마/몇" question asks: the ranked
# paragraphs a quote may come from (three hits' best paragraphs and their runners-up).
_FIGURE_LEAD_DEPTH = 6
# Weight of the words a follow-up borrowed from the conversation, against its own: dev + held-out-1..6, set means
# of first-200 .589 → .612 (0.15: .614, 0.6: .596).
_BORROWED_WEIGHT = 0.3
# "무엇", "뭔지", "뜻": the question asks what a term means; statutes define with "“X”란 … 말한다".
_ASKS_MEANING = re.compile(r"뭐야|뭔지|뭐예요|무엇|무슨\s*뜻|뜻이|의미|정의|이란\?|란\?")
_DEFINITION = re.compile(r"(이)?란\s.{0,400}?(말한다|뜻한다)")  # bounded: `.*` rescanned the line per 란
# "중간정산 사유", "기재사항", "어떤 경우에": the question asks for what a list holds; the sentence that announces
# the list, read with its first items, answers it.
_ASKS_LIST = re.compile(r"사유|사항|요건|종류|어떤\s*경우|무슨\s*경우|뭐뭐|무엇무엇")
# "최대 몇 시간", "한도가 얼마": the question asks for a limit; the text states one with "초과할 수 없다", "이하" ….
_ASKS_LIMIT = re.compile(r"최대|최고|상한|한도|넘(어|으면|을|지)|초과")
_STATES_LIMIT = re.compile(r"초과할\s*수\s*없|초과하지\s*못|넘지\s*못|한도로|이하|이내")
# The proviso of a provision ("…할 수 있다. 다만, …"); group 1 reads it on its own, without its "다만,".
_PROVISO = re.compile(r"(?:^|(?<!\s)\s+)다만,\s*(.{1,500}?다\.)")  # bounded and from a blank run's start
_ITEM_START = re.compile(r"^\s*(\d+(의\d+)?|[가-하])\.\s")
# "…한다." ends a sentence; "다." opening a line is the third item of a 목 list (가. 나. 다.), not an ending.
_SENTENCE_END = re.compile(r"(?<=\S다\.)\s+|\n+")
# A sentence that announces a list ("다음 각 호의 …", "다음과 같다") is read together with its first items.
_ANNOUNCES_ITEMS = re.compile(r"다음\s*각\s*(호|목)|다음과\s*같")


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
    text = _AMENDMENT_NOTE.sub("", paragraph)
    units: list[str] = []
    for piece in (s.strip() for s in _SENTENCE_END.split(text)):
        if not piece:
            continue
        # A proviso or its elaboration reads with its sentence, and so does the rest of a sentence whose
        # parenthesis ended in "…포함한다. 이하 이 조에서 같다)": a sentence never ends inside brackets.
        if units and (piece.startswith(("다만", "이 경우")) or units[-1].count("(") > units[-1].count(")")):
            units[-1] = f"{units[-1]} {piece}"
        else:
            units.append(piece)
    return units


def _with_context(units: list[str], index: int) -> str:
    """A provision as a reader needs it: an item with the sentence that announces its list, a sentence that
    announces a list with the items that follow."""
    unit = units[index]
    if _ITEM_START.match(unit):
        head = next((units[i] for i in range(index - 1, -1, -1) if not _ITEM_START.match(units[i])), "")
        return f"{head} {unit}" if head and _ANNOUNCES_ITEMS.search(head) else unit
    if _ANNOUNCES_ITEMS.search(unit):
        items = [u for u in units[index + 1:] if _ITEM_START.match(u)]
        return " ".join([unit, *items])
    return unit


def _lead_text(sentence: str, limit: int) -> str:
    """A sentence as the answer's lead: without its 항 mark, cut at `limit` characters."""
    sentence = _PARAGRAPH_MARK.sub("", sentence).strip()
    return sentence if len(sentence) <= limit else sentence[:limit].rstrip() + "…"



def quote_text(text: str, limit: int = 300) -> str:
    """One line of quotable text: amendment notes dropped, cut at `limit` characters with an ellipsis."""
    text = _AMENDMENT_NOTE.sub("", text).replace("\n", " ").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "…"
