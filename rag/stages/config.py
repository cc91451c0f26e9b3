"""Stage settings: every knob of the answer stages, with its default (kept free of heavy imports, so `bot/config.py`
can expose `StageTuning` as `REGBOT_STAGES_*`).

`StageTuning` holds the knobs no older setting reaches; `StagesConfig` adds the ones that predate it (the LLM hang,
HyDE, the history window, the law collections, the answerability threshold), which `bot/config.py` fills from their
own variables. `build_stages` takes one `StagesConfig`. The answerability judge's weights are fitted data
(`rag/data/answerability_fit.yaml`), not knobs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rag.retrieval.config import load_ranking_fit

# The lead's weights are fitted (`benchmarks/lead_fit.py` writes them with their provenance).
LEAD_FIT = Path(__file__).resolve().parent.parent / "data" / "lead_fit.yaml"
_FIT = load_ranking_fit(LEAD_FIT)


# The hand-set values the fit started from, for the fit to compare against.
HAND_SET: dict[str, float] = {}


def fitted(name: str, default: float) -> float:
    """A knob's default: its fitted value when `lead_fit.yaml` has one, else the hand-set `default`."""
    HAND_SET[name] = default
    return _FIT.get(name, default)


class StageTuning(BaseModel):
    """The offline answer's shape and lead weights, the grader's and verifier's bars, the LLM stages' limits."""

    # A misspelt knob must not silently be the default.
    model_config = ConfigDict(frozen=True, extra="forbid")

    # The extractive answer (the offline generator, and the LLM generator's fallback).
    hits_per_part: int = Field(5, ge=1, description="Hits of each question part the offline answer quotes from.")
    paragraphs_per_hit: int = Field(3, ge=1, description="Paragraphs (항) one article may contribute to it.")
    max_quote_chars: int = Field(400, ge=20, description="Characters of a supporting quote before it is cut.")
    max_quotes: int = Field(3, ge=1, description="Supporting quotes under the lead (one fewer a part of a compound "
                                                 "question).")
    lead_sentences: int = Field(int(fitted("lead_sentences", 2)), ge=1,
        description="Sentences in the offline answer's lead.")
    max_lead_chars: int = Field(int(fitted("max_lead_chars", 220)), ge=20,
        description="Characters of a lead sentence before it is cut.")
    min_relative_score: float = Field(0.3, ge=0, le=1, description="Share of the best paragraph's score another "
                                                                   "paragraph needs to be quoted.")
    second_lead_share: float = Field(fitted("second_lead_share", 0.35), ge=0,
        description="Share of the first lead's score a second sentence needs when it answers the words the first "
                    "leaves out.")
    # The lead: how much a sentence that states what is asked gains over one that only shares words. These and the
    # lead's other values are fitted (rag/data/lead_fit.yaml); the numbers below are the hand-set values before.
    lead_figure_weight: float = Field(fitted("lead_figure_weight", 1.5), gt=0,
        description="A lead sentence with a figure, when a figure is asked.")
    lead_definition_weight: float = Field(fitted("lead_definition_weight", 1.5), gt=0,
        description="A definition (\"…이란 … 말한다\"), when the meaning is asked.")
    lead_limit_weight: float = Field(fitted("lead_limit_weight", 1.3), gt=0,
        description="A stated limit (\"초과할 수 없다\"), when a limit is asked.")
    lead_sanction_weight: float = Field(fitted("lead_sanction_weight", 1.5), gt=0,
        description="A stated sanction, when a sanction is asked.")
    lead_list_weight: float = Field(fitted("lead_list_weight", 2.0), gt=0,
        description="A sentence announcing a list (\"다음 각 호\"), when what a list holds is asked.")
    lead_condition_met_weight: float = Field(fitted("lead_condition_met_weight", 1.3), gt=0,
        description="A sentence stating the condition asked (\"1년 미만\" for \"아직 1년 안 됐으면\").")
    lead_condition_missed_weight: float = Field(fitted("lead_condition_missed_weight", 0.5), gt=0,
        description="A sentence stating the opposite or a later threshold of the condition asked.")
    # dev + held-out-1..6, set means of first-200 .589 → .612 (0.15: .614, 0.6: .596).
    borrowed_word_weight: float = Field(0.3, ge=0, description="Weight of the words a follow-up borrowed from the "
                                                               "conversation, against its own.")
    lead_position_decay: float = Field(fitted("lead_position_decay", 0.2), ge=0,
        description="How much a lead sentence loses for each paragraph ranked above its own (down to half).")
    lead_order_decay: float = Field(fitted("lead_order_decay", 0.03), ge=0,
        description="How much a lead sentence loses for each sentence before it in its paragraph (down to 0.7).")
    lead_free_chars: int = Field(int(fitted("lead_free_chars", 120)), ge=0,
        description="Characters of a lead sentence before its length counts against it.")
    figure_lead_depth: int = Field(int(fitted("figure_lead_depth", 6)), ge=3,
        description="Ranked paragraphs the lead searches for the figure a \"며칠/얼마/몇\" question asks.")
    quote_figure_weight: float = Field(1.3, gt=0, description="A paragraph with a figure, when a figure is asked "
                                                              "(the order of the quotes).")
    quote_sanction_weight: float = Field(1.5, gt=0, description="A paragraph stating a sanction, when one is asked.")
    # The LLM grader and verifier.
    grade_pass_score: float = Field(70.0, ge=0, le=100, description="The LLM grader's score (0–100) that passes "
                                                                     "the evidence.")
    grade_hedge_score: float = Field(40.0, ge=0, le=100, description="Below the pass score, the score from which "
                                                                     "the closest article is quoted as a hedge.")
    verify_confirm_support: float = Field(0.8, gt=0, le=1, description="Share of a sentence's words its sources "
                                                                       "must hold to be confirmed without a call.")
    # The LLM stages' limits.
    structured_s: float = Field(15.0, gt=0, description="Seconds a structured LLM call (understand, grade, "
                                                        "rewrite, verify, follow-ups) may take, retries included, "
                                                        "while it progresses.")
    max_tool_rounds: int = Field(2, ge=0, description="Rounds the answer's LLM may consult its tools (each is a "
                                                      "call of the turn's budget); 0 offers none.")
    answer_max_tokens: int = Field(1500, ge=100, description="Tokens the answer's LLM may write.")
    answer_source_chars: int = Field(1500, ge=100, description="Characters of each numbered source in the "
                                                               "answer's prompt.")
    answer_hold_chars: int = Field(80, ge=0, description="Characters of a tool round's text held back (it may be a "
                                                         "preamble to a tool call) before it is shown.")
    understanding_memo_size: int = Field(256, ge=0, description="Questions without history whose understanding "
                                                                "is remembered in-process.")


class StagesConfig(StageTuning):
    """Every stage knob: the tuning plus the values older settings give (`bot/config.py` maps them)."""

    # With the LLM hanging, the first structured call gets no byte within `structured_hang_s` (which opens the
    # breaker), every later stage skips the LLM, and the quoted answer follows about that long after the question.
    structured_hang_s: float = Field(2.0, gt=0, description="Nothing received for this long in a structured call "
                                                            "is a hang.")
    stream_hang_s: float = Field(8.0, gt=0, description="Nothing received for this long in the answer stream is a "
                                                        "hang (also tool rounds).")
    hyde: bool = Field(True, description="Search the LLM's hypothetical answer for a vague question.")
    answerable_threshold: float | None = Field(None, ge=0, le=1, description="The offline answerability a question "
                                                                             "needs; None: the fitted one.")
    history_messages: int = Field(6, ge=1, le=50, description="Messages of the conversation the enhancer reads.")
    history_chars: int = Field(300, ge=20, le=4000, description="Characters kept of each.")
    law_collections: tuple[str, ...] = Field((), description="Collections that hold statutes; empty: by name.")
