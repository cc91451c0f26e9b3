"""The offline answer's lead: the candidate sentences and the choice among them.

`lead_candidates` lists what may lead (each provision of the best paragraphs, as the reader is shown it) with what
the choice reads: its base score (the question's words it holds, the retriever's order, its place in the paragraph,
its length) and whether it states what is asked (`FLAGS`). `choose_lead` weighs them with `StageTuning`'s lead
weights (fitted by `benchmarks/lead_fit.py`) and picks one or two sentences, under rules the fit does not weigh: a
figure asked is answered by a sentence stating one, a sentence stating the opposite of the condition asked never
leads, and a second sentence from another regulation adds a word the question asks and never a different figure in
the unit asked. The two are apart so that the fit can record the candidates once and replay the choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.lang.asks import QuestionFacets
from rag.lang.quantities import FIGURE, STATED_CONDITION, figure_unit, numeric_conditions, stated_figures
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
from rag.models import CIRCLED, Hit
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.config import StageTuning

# What a lead sentence may state of what is asked, in the order of `factors`.
FLAGS = ("figure", "definition", "limit", "sanction", "list", "condition_met", "condition_missed")
MISSED = FLAGS.index("condition_missed")


@dataclass(frozen=True)
class LeadCandidate:
    """A sentence that may lead: `base(tuning)` × the factors of its `flags` is its score."""

    overlap: float  # the question words it holds (their weight)
    position: int  # its paragraph's place among those the lead reads
    order: int  # its place in its paragraph
    length: int  # characters shown
    flags: tuple[bool, ...]  # FLAGS
    in_asked_unit: bool  # states a figure in the unit asked ("며칠" → 일)
    has_figure: bool
    rank: int  # its paragraph's place among the ranked paragraphs
    found: frozenset[str]
    shown: str
    hit: Hit
    marker: str
    text: str

    def base(self, tuning: StageTuning) -> float:
        """Its score before what it states: the question words it holds, after the paragraphs the retriever ranks
        higher and the sentences before it in its paragraph; a lead is read first, so shorter answers sooner."""
        weight = max(0.5, 1.0 - tuning.lead_position_decay * self.position) * \
            max(0.7, 1.0 - tuning.lead_order_decay * self.order)
        return self.overlap * weight / (1.0 + max(0, self.length - tuning.lead_free_chars) / 200)


def factors(tuning: StageTuning) -> tuple[float, ...]:
    """The lead weights of `FLAGS`, in their order."""
    return (tuning.lead_figure_weight, tuning.lead_definition_weight, tuning.lead_limit_weight,
            tuning.lead_sanction_weight, tuning.lead_list_weight, tuning.lead_condition_met_weight,
            tuning.lead_condition_missed_weight)


def lead_candidates(tokenizer: Tokenizer, terms: dict[str, float], ranked: list[tuple[float, Hit, str, str]],
                    facets: QuestionFacets, *, max_chars: int, depth: int) -> list[LeadCandidate]:
    """Every provision of the best paragraphs (and, for a figure asked, of ranked paragraphs down to `depth` that
    state one) that shares a word with the question, in the order the paragraphs and sentences come."""
    asks_figure, asks_limit = facets.figure, facets.limit
    conditions = set(facets.conditions)  # "1년 지나면": (1, 년, at least)
    contradictions = {(n, unit, not more) for n, unit, more in conditions}
    asked_units = facets.stated_units
    pool = [(rank, r) for rank, r in enumerate(ranked[:3])]
    # A figure asked for (며칠/얼마/몇, or a unit such as a deadline's) is answered by a paragraph stating it,
    # which may rank a little lower than ones that only mention it.
    if facets.amount or asked_units:
        pool += [(rank, r) for rank, r in enumerate(ranked[:depth]) if rank >= 3
                 and ((asked_units and any(u.search(r[3]) for u in asked_units))
                      or (not asked_units and FIGURE.search(r[3])))]
    candidates: list[LeadCandidate] = []
    for position, (rank, (_, hit, marker, text)) in enumerate(pool):
        sentences = _sentences(text)
        # (order, what is matched, what is shown): each provision, without a proviso ("다만, …") that shares
        # no word with the question (the quote below has it), so that a lead stays one clause; and where the
        # proviso states the figure or limit asked for, that proviso on its own, matched as the provision it
        # qualifies: the limit is often the proviso of a long sentence that announces a list.
        provisos = [(PROVISO.findall(sentence) or [""])[0] for sentence in sentences]
        present = [p for p in provisos if p]
        related = {p: term_overlap(terms, set(found)) > 0
                   for p, found in zip(present, tokenizer.tokens_many(present), strict=True)}
        units = []
        for order, sentence in enumerate(sentences):
            shown = _with_context(sentences, order)
            if provisos[order] and not related[provisos[order]]:
                shown = PROVISO.sub("", shown, count=1)
            units.append((order, sentence, shown))
        units += [(order, sentences[order], proviso) for order, proviso in enumerate(provisos)
                  if (asks_figure and FIGURE.search(proviso)) or (asks_limit and STATES_LIMIT.search(proviso))]
        tokens = tokenizer.tokens_many([scored for _, scored, _ in units]) if units else []
        for (order, _, context), found in zip(units, tokens, strict=True):
            # Words are matched in the provision itself; what is asked must be in what the reader is shown.
            overlap = term_overlap(terms, set(found))
            if overlap <= 0:
                continue
            shown = _lead_text(context, max_chars)
            candidates.append(LeadCandidate(
                overlap=overlap, position=position, order=order, length=len(shown),
                flags=_flags(shown, facets, conditions, contradictions),
                in_asked_unit=any(u.search(shown) for u in asked_units), has_figure=bool(FIGURE.search(shown)),
                rank=rank, found=frozenset(found), shown=shown, hit=hit, marker=marker, text=text))
    return candidates


def _flags(shown: str, facets: QuestionFacets, conditions: set, contradictions: set) -> tuple[bool, ...]:
    met = missed = False
    if conditions:
        stated = numeric_conditions(shown, STATED_CONDITION)
        beyond = any(more and asked_more and unit == asked_unit and int(n) > int(asked_n)
                     for n, unit, more in stated for asked_n, asked_unit, asked_more in conditions)
        # "1년 미만" does not answer "1년 지나면", nor does "3년 이상" (a later threshold); it answers "아직 1년
        # 안 됐으면"
        missed = bool(stated & contradictions) or beyond
        met = not missed and bool(stated & conditions)
    return (facets.figure and bool(FIGURE.search(shown)), facets.meaning and bool(DEFINITION.search(shown)),
            facets.limit and bool(STATES_LIMIT.search(shown)), facets.sanction and bool(STATES_SANCTION.search(shown)),
            facets.listing and bool(ANNOUNCES_ITEMS.search(shown)), met, missed)


def choose_leads(parts: Sequence[tuple[list[LeadCandidate], dict[str, float], QuestionFacets]], tuning: StageTuning,
                 at_most: int) -> list[list[LeadCandidate]]:
    """Each part's lead, in order (candidates, weighted words, facets per part): a part never leads with a sentence
    an earlier part's lead already quoted, and takes its next best instead (two parts over one article once both
    opened with its ①)."""
    said: set[str] = set()
    leads = []
    for candidates, terms, facets in parts:
        chosen = choose_lead([c for c in candidates if c.shown not in said], terms, tuning, at_most, facets)
        said.update(c.shown for c in chosen)
        leads.append(chosen)
    return leads


def choose_lead(candidates: list[LeadCandidate], terms: dict[str, float], tuning: StageTuning, at_most: int,
                facets: QuestionFacets) -> list[LeadCandidate]:
    """The lead: the best-scored candidate (for a figure asked, the best that states one), and a second from
    another paragraph when it scores nearly as well or answers the question words the first leaves out; from
    another regulation, only when it adds a question word and no other figure in the unit asked."""
    weights = factors(tuning)
    scored = []
    for c in candidates:
        if c.rank >= 3 and c.rank >= tuning.figure_lead_depth:
            continue
        weight = 1.0
        for flag, factor in zip(c.flags, weights, strict=True):
            if flag:
                weight *= factor
        base = c.base(tuning)
        scored.append((base * weight, base / c.overlap * weight, c))
    scored.sort(key=lambda s: -s[0])
    if not scored:
        return []
    # A sentence stating the opposite of the condition the question sets ("1년 미만" for "1년 지나면") never leads
    # while another does not: it answers another case, however many of the question's words it holds.
    eligible = [s for s in scored if not s[2].flags[MISSED]] or scored
    best = eligible[0]
    if facets.amount or facets.stated_units:
        # "며칠/얼마/몇" is answered by a figure (in the unit asked, when one is): a sentence without one never
        # leads while another states it.
        stating = [s for s in eligible if s[2].in_asked_unit] or [s for s in eligible if s[2].has_figure]
        best = stating[0] if stating else best
    chosen = [best[2]]
    # A second sentence when it answers nearly as well, or answers what the first leaves out (a question about
    # two things); never a second quote of the same paragraph.
    uncovered = {t: w for t, w in terms.items() if t not in best[2].found}
    key = (best[2].hit.chunk.chunk_id, best[2].marker)
    # A sentence of another regulation follows only when it adds a word of the question the first leaves out (one
    # regulation's sentences read as one rule; another's that adds nothing asked is a detour), and never when it
    # states a different figure in the unit asked: a company rule's 16일 and the law's minimum 15일 for one "며칠"
    # are two answers, and the reader cannot tell which is theirs. One regulation's figures read together (15일,
    # at most 25일).
    stated = asked_figures(best[2].shown, facets)
    others = [s for s in scored[1:] if (s[2].hit.chunk.chunk_id, s[2].marker) != key
              and (s[2].hit.chunk.doc == best[2].hit.chunk.doc
                   or (term_overlap(uncovered, set(s[2].found)) > 0
                       and not _contradicts(stated, asked_figures(s[2].shown, facets))))]
    close = next((s for s in others if s[0] >= 0.8 * best[0]), None)
    complement = max(others, key=lambda s: term_overlap(uncovered, set(s[2].found)) * s[1], default=None)
    if close is None and complement is not None and \
            term_overlap(uncovered, set(complement[2].found)) * complement[1] >= tuning.second_lead_share * best[0]:
        close = complement
    if at_most > 1 and close is not None:
        chosen.append(close[2])
    return chosen


_PARAGRAPH_MARK = re.compile(rf"^[{CIRCLED}]\s*")


def asked_figures(text: str, facets: QuestionFacets) -> dict[str, set[str]]:
    """The figures `text` states in each unit asked ("며칠" → {"days": {"15일"}}); for an amount asked without a
    unit ("얼마"), every figure by its unit. Empty when no figure is asked."""
    if facets.units:
        return stated_figures(text, [(u.name, u.stated) for u in facets.units])
    return stated_figures(text, [("", FIGURE)]) if facets.amount else {}


def _contradicts(first: dict[str, set[str]], second: dict[str, set[str]]) -> bool:
    """Whether `second` states a figure in a unit asked that `first` states otherwise."""
    return any(unit in first and not figures <= first[unit] for unit, figures in second.items())


def term_overlap(terms: dict[str, float], found: set[str]) -> float:
    """Weight of the terms `found` holds. A figure of the question ("3일은 안 돼?") is the value being checked, not a
    topic word: a figure in its unit ("2일") answers it as well as the same figure."""
    units = {figure_unit(t) for t in found if t[:1].isdigit()} - {""}
    return sum(w for t, w in terms.items() if t in found or (t[:1].isdigit() and figure_unit(t) in units))


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
