"""The operator report over turn records: `regbot report` (terminal, `--json`, `--html FILE`) and `GET /admin`.

`build_report` is a pure function of the records and a time window, so the CLI and the admin page show the same
figures. The JSON keys are a contract (DESIGN.md §3): `turns`, `by_outcome`, `by_platform`, `top_articles`,
`refusal_themes`, `feedback`, `latency_ms`.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, tzinfo

from pydantic import BaseModel, ConfigDict, Field

from bot.report.changes import AmendmentActivity, recent_changes
from bot.report.records import FeedbackRecord, RecordStore, TurnRecord
from bot.report.themes import Theme, group_refusals
from rag.knowledge.versions import DocumentChange
from rag.stages.vocabulary import KnownWords

# Outcomes the contract always lists (zero when absent); any other outcome gets its own key as it appears.
CONTRACT_OUTCOMES = ("answered", "hedged", "not_covered", "small_talk", "rate_limited", "error")
# Turns the pipeline answered (latency, LLM calls and tokens are measured on these).
ANSWERED_OUTCOMES = frozenset({"answered", "hedged", "not_covered", "small_talk"})
TOP_ARTICLES = 10
TOP_THEMES = 12
MAX_DISLIKED = 20
_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([hdw])\s*$")
_UNIT_S = {"h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
# Records older than ten years do not exist; a larger window overflows a timedelta or reaches before 1970.
_MAX_SINCE_S = 3650 * 86400.0
_MAX_SINCE_CHARS = 40


class ReportWindowError(ValueError):
    """`--since` is not a duration such as 7d, 24h or 2w."""


def parse_since(text: str) -> timedelta:
    """`7d`, `24h`, `2w` → a timedelta; raises ReportWindowError with what to write instead."""
    match = _SINCE.match((text or "")[:_MAX_SINCE_CHARS])
    if not match or float(match.group(1)) <= 0:
        raise ReportWindowError(f"--since must be a duration such as 7d, 24h or 2w (got {text[:_MAX_SINCE_CHARS]!r})")
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)]
    if seconds > _MAX_SINCE_S:
        raise ReportWindowError(f"--since can reach back at most {_MAX_SINCE_S // 86400:.0f}d (got {text!r})")
    return timedelta(seconds=seconds)


class ArticleCount(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc: str
    article: str
    count: int


class WordCount(BaseModel):
    model_config = ConfigDict(frozen=True)

    word: str
    count: int


class DocCount(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc: str
    count: int


class DayVolume(BaseModel):
    """Turns of one day (in the report's time zone), by platform."""

    model_config = ConfigDict(frozen=True)

    day: str  # YYYY-MM-DD
    total: int
    by_platform: dict[str, int]


class DislikedAnswer(BaseModel):
    """An answer marked 👎, with what it cited."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    at: str  # ISO time of the vote
    platform: str
    outcome: str = ""  # "" when the turn's record is gone (or was never written)
    citations: tuple[str, ...] = ()
    question: str = ""  # only with REGBOT_KEEP_QUESTIONS
    comment: str = ""


class Latency(BaseModel):
    model_config = ConfigDict(frozen=True)

    p50: float | None
    p95: float | None


class Feedback(BaseModel):
    model_config = ConfigDict(frozen=True)

    up: int
    down: int


class Report(BaseModel):
    """Everything `regbot report` and `/admin` show."""

    model_config = ConfigDict(frozen=True)

    since: str
    until: str
    turns: int
    by_outcome: dict[str, int]
    by_platform: dict[str, int]
    by_language: dict[str, int]  # ko | en | vi (unknown: records written before languages were recorded)
    by_day: list[DayVolume]
    top_docs: list[DocCount]
    top_articles: list[ArticleCount]
    refusal_rate: float | None  # not_covered / (answered + hedged + not_covered); None without such turns
    refusal_themes: list[Theme]
    # Words of refused questions neither the index nor the lexicon knows, with how many questions held each: what
    # an operator may add to REGBOT_DATA_DIR/lexicon/ (empty when the index was not read).
    unknown_words: list[WordCount] = Field(default_factory=list)
    feedback: Feedback
    disliked: list[DislikedAnswer]
    latency_ms: Latency  # over answered turns (answered, hedged, not_covered, small_talk)
    llm_calls_per_answer: float | None
    llm_tokens_per_answer: float | None  # None while answers do not report tokens
    cache_hit_rate: float | None
    kept_questions: bool  # some records in the window carry question text
    # Amendments of the last REGBOT_RECENT_CHANGE_DAYS and the questions that touched them (docs/versions.md).
    recent_changes: list[AmendmentActivity] = Field(default_factory=list)


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (p95 of 20 values is the 19th); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def build_report(turns: Sequence[TurnRecord], feedback: Sequence[FeedbackRecord], *, since: float, until: float,
                 tz: tzinfo | None = None, changes: Sequence[DocumentChange] = (),
                 recent_days: int = 90, known: KnownWords | None = None) -> Report:
    """The report over records with `since <= at <= until` (epoch seconds); days are counted in `tz`. With `known`,
    the refused questions' words it does not know are listed, and named beside each theme."""
    zone = tz or datetime.now().astimezone().tzinfo or UTC
    window = sorted((t for t in turns if since <= t.at <= until), key=lambda t: t.at)
    votes = sorted((f for f in feedback if since <= f.at <= until), key=lambda f: f.at)

    outcomes = Counter(t.outcome for t in window)
    by_outcome = {name: outcomes.get(name, 0) for name in CONTRACT_OUTCOMES}
    by_outcome.update({name: n for name, n in sorted(outcomes.items()) if name not in by_outcome})

    days: dict[str, Counter[str]] = defaultdict(Counter)
    for t in window:
        days[_day(t.at, zone)][t.platform] += 1
    by_day = [DayVolume(day=day, total=sum(c.values()), by_platform=dict(sorted(c.items())))
              for day, c in sorted(_all_days(since, until, zone, days).items())]

    answered = [t for t in window if t.outcome in ANSWERED_OUTCOMES]
    articles = Counter((c.doc, c.article) for t in window for c in t.citations)
    docs = Counter(doc for t in window for doc in {c.doc for c in t.citations})
    refused = [t for t in window if t.outcome == "not_covered"]
    covered_or_not = by_outcome["answered"] + by_outcome["hedged"] + by_outcome["not_covered"]
    tokens = [t.llm_tokens for t in answered if t.llm_tokens is not None]
    cacheable = [t for t in answered if t.route == "search"]

    return Report(
        since=_iso(since, zone),
        until=_iso(until, zone),
        turns=len(window),
        by_outcome=by_outcome,
        by_platform=dict(Counter(t.platform for t in window).most_common()),
        by_language=dict(Counter(t.language or "unknown" for t in window).most_common()),
        by_day=by_day,
        top_docs=[DocCount(doc=d, count=n) for d, n in _ranked(docs)[:TOP_ARTICLES]],
        top_articles=[ArticleCount(doc=d, article=a, count=n) for (d, a), n in _ranked(articles)[:TOP_ARTICLES]],
        refusal_rate=round(by_outcome["not_covered"] / covered_or_not, 4) if covered_or_not else None,
        refusal_themes=[t.model_copy(update={"unknown": tuple(n for n in t.nouns if known and not known(n))})
                        for t in group_refusals([t.topic_nouns for t in refused],
                                                [t.question for t in refused])[:TOP_THEMES]],
        unknown_words=[WordCount(word=w, count=n) for w, n in known.unknown(t.topic_nouns for t in refused)
                       ][:TOP_THEMES] if known else [],
        feedback=Feedback(up=sum(v.rating == "up" for v in votes), down=sum(v.rating == "down" for v in votes)),
        disliked=_disliked(window, votes, zone),
        latency_ms=Latency(p50=percentile([t.latency_ms for t in answered], 0.5),
                           p95=percentile([t.latency_ms for t in answered], 0.95)),
        llm_calls_per_answer=round(sum(t.llm_calls for t in answered) / len(answered), 2) if answered else None,
        llm_tokens_per_answer=round(sum(tokens) / len(tokens), 1) if tokens else None,
        cache_hit_rate=round(sum(t.cache_hit for t in cacheable) / len(cacheable), 4) if cacheable else None,
        kept_questions=any(t.question for t in window),
        recent_changes=recent_changes(changes, window, since=since, until=until, recent_days=recent_days),
    )


async def load_report(store: RecordStore, *, window: timedelta, now: float, tz: tzinfo | None = None,
                      changes: Sequence[DocumentChange] = (), recent_days: int = 90,
                      known: KnownWords | None = None) -> Report:
    """Read the window's records from `store` and build the report (with the index's recent `changes`)."""
    since = now - window.total_seconds()
    turns, votes = await store.turns(since), await store.feedback(since)
    # Off the event loop: grouping refusal themes grows with the square of the distinct nouns in the window.
    return await asyncio.to_thread(build_report, turns, votes, since=since, until=now, tz=tz, changes=changes,
                                   recent_days=recent_days, known=known)


def report_json(report: Report) -> dict:
    """The `--json` object (the contract keys plus the rest of the report)."""
    data = report.model_dump(mode="json")
    data["refusal_themes"] = [{"label": t.label, "count": t.count, "nouns": list(t.nouns),
                               **({"examples": list(t.examples)} if t.examples else {}),
                               **({"unknown": list(t.unknown)} if t.unknown else {})}
                              for t in report.refusal_themes]
    return data


def _disliked(window: Sequence[TurnRecord], votes: Sequence[FeedbackRecord], zone: tzinfo) -> list[DislikedAnswer]:
    by_id = {t.turn_id: t for t in window}
    by_conversation: dict[str, list[TurnRecord]] = defaultdict(list)
    for t in window:
        if t.conversation:
            by_conversation[t.conversation].append(t)
    disliked: list[DislikedAnswer] = []
    for vote in reversed(votes):  # newest first
        if vote.rating != "down":
            continue
        turn = by_id.get(vote.turn_id) if vote.turn_id else None
        if turn is None and not vote.turn_id:
            # A vote that names no turn rates its conversation's latest answer before the vote.
            earlier = [t for t in by_conversation.get(vote.conversation, ()) if t.at <= vote.at]
            turn = earlier[-1] if earlier else None
        disliked.append(DislikedAnswer(
            turn_id=turn.turn_id if turn else vote.turn_id,
            at=_iso(vote.at, zone),
            platform=vote.platform,
            outcome=turn.outcome if turn else "",
            citations=tuple(f"{c.doc} {c.article}".strip() for c in turn.citations) if turn else (),
            question=turn.question if turn else "",
            comment=vote.comment,
        ))
        if len(disliked) >= MAX_DISLIKED:
            break
    return disliked


def _ranked(counter: Counter) -> list:
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))


def _day(at: float, zone: tzinfo) -> str:
    return datetime.fromtimestamp(at, zone).date().isoformat()


def _iso(at: float, zone: tzinfo) -> str:
    return datetime.fromtimestamp(at, zone).isoformat(timespec="seconds")


def _all_days(since: float, until: float, zone: tzinfo,
              days: dict[str, Counter[str]]) -> dict[str, Counter[str]]:
    """Every day of the window, empty ones too, so a quiet day shows as a gap in the chart."""
    first = datetime.fromtimestamp(since, zone).date()
    last = datetime.fromtimestamp(until, zone).date()
    filled = dict(days)
    day = first
    while day <= last and len(filled) < 400:
        filled.setdefault(day.isoformat(), Counter())
        day += timedelta(days=1)
    return filled


__all__ = [
    "CONTRACT_OUTCOMES",
    "Report",
    "ReportWindowError",
    "build_report",
    "load_report",
    "parse_since",
    "percentile",
    "report_json",
]
