"""`regbot report [--since 7d] [--json | --html FILE] [--purge [--all]]`: the report on a terminal, as JSON or HTML.

Reads the records `serve` writes (Redis when REDIS_URL is set, else `records.sqlite` in the data dir) while it
runs; never creates the data dir or the records file. `--purge` deletes records older than REGBOT_RECORDS_DAYS
(the server also does it about hourly); `--purge --all` deletes every record.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bot.config import Settings
from bot.report import labels as L
from bot.report.admin import render_report_html
from bot.report.changes import changes_in_data_dir
from bot.report.records import open_record_store
from bot.report.report import Report, ReportWindowError, load_report, parse_since, report_json
from rag.knowledge.store import ChunkStore
from rag.lang.lexicon import Lexicon
from rag.stages.vocabulary import KnownWords

_DAY_S = 86400.0

# C0 and C1 control characters but tab and newline: a kept question with ESC sequences must not drive the
# operator's terminal (colours, cursor moves, a rewritten title).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """`text` as the terminal shows it: control characters removed, rich markup escaped."""
    return escape(_CONTROL.sub("", text))


def run_report(settings: Settings, *, since: str, as_json: bool, html_file: str | None, purge: bool,
               purge_all: bool, out: Console, err: Console) -> int:
    """The `report` command; input errors are one line on stderr and exit 2."""
    try:
        window = parse_since(since)
    except ReportWindowError as bad:
        err.print(f"regbot report: {bad}", markup=False, highlight=False, soft_wrap=True)
        return 2
    if purge_all and not purge:
        err.print("regbot report: --all only goes with --purge", markup=False, highlight=False, soft_wrap=True)
        return 2
    try:
        if purge:
            before = None if purge_all else time.time() - settings.records_days * _DAY_S
            deleted = asyncio.run(_purge(settings, before))
            out.print(L.PURGED.format(count=deleted), markup=False, highlight=False, soft_wrap=True)
            return 0
        report = asyncio.run(_load(settings, window))
    except Exception as exc:  # the records store is unreachable or unreadable
        err.print(f"regbot report: cannot read the turn records ({exc.__class__.__name__}: {exc})",
                  markup=False, highlight=False, soft_wrap=True)
        return 1
    if as_json:
        sys.stdout.write(json.dumps(report_json(report), ensure_ascii=False) + "\n")
    elif html_file:
        path = Path(html_file)
        try:
            path.write_text(render_report_html(report), encoding="utf-8")
        except OSError as exc:
            err.print(f"regbot report: cannot write {path}: {exc.strerror}", markup=False, highlight=False,
                      soft_wrap=True)
            return 1
        err.print(f"{path}", markup=False, highlight=False, soft_wrap=True)
    else:
        print_report(report, out)
    return 0


async def _load(settings: Settings, window) -> Report:
    store = open_record_store(settings, create=False)
    try:
        return await load_report(store, window=window, now=time.time(), changes=changes_in_data_dir(settings),
                                 recent_days=settings.recent_change_days, known=_known_words(settings))
    finally:
        await store.close()


def _known_words(settings: Settings) -> KnownWords | None:
    """The index's and the lexicon's words, or None when there is no index (nothing is created)."""
    index = settings.data_dir / "index.sqlite"
    return KnownWords.of_index(ChunkStore(index), Lexicon(settings.data_dir / "lexicon")) if index.is_file() else None


async def _purge(settings: Settings, before: float | None) -> int:
    store = open_record_store(settings, create=False)
    try:
        return await store.purge(before)
    finally:
        await store.close()


def print_report(report: Report, out: Console) -> None:
    """Rich tables: summary, volume by day, outcomes, top articles, refusal themes, disliked answers."""
    period = f"{report.since[:16].replace('T', ' ')} – {report.until[:16].replace('T', ' ')}"
    summary = Table(title=f"{L.TITLE} ({period})", show_header=False)
    summary.add_column(justify="left")
    summary.add_column(justify="right")
    rate = "–" if report.refusal_rate is None else f"{report.refusal_rate * 100:.1f}%"
    p50, p95 = report.latency_ms.p50, report.latency_ms.p95
    for label, value in (
        (L.TURNS, f"{report.turns:,}"),
        (L.LANGUAGES, " · ".join(f"{name} {count:,}" for name, count in report.by_language.items()) or "–"),
        (L.REFUSAL_RATE, rate),
        (L.FEEDBACK_UP, f"{report.feedback.up:,}"),
        (L.FEEDBACK_DOWN, f"{report.feedback.down:,}"),
        (L.LATENCY_P50, "–" if p50 is None else f"{p50:,.0f} ms"),
        (L.LATENCY_P95, "–" if p95 is None else f"{p95:,.0f} ms"),
        (L.LLM_CALLS, "–" if report.llm_calls_per_answer is None else f"{report.llm_calls_per_answer}"),
        (L.LLM_TOKENS, "–" if report.llm_tokens_per_answer is None else f"{report.llm_tokens_per_answer}"),
    ):
        summary.add_row(plain(label), value)
    out.print(summary)
    if not report.turns:
        out.print(L.NO_DATA, markup=False)
        return

    platforms = list(report.by_platform)
    volume = Table(title=L.VOLUME_CHART)
    volume.add_column(L.COL_DAY)
    for p in platforms:
        volume.add_column(L.platform_name(p), justify="right")
    volume.add_column(L.COL_TOTAL, justify="right")
    for day in report.by_day:
        if day.total:
            volume.add_row(day.day, *(str(day.by_platform.get(p, 0)) for p in platforms), str(day.total))
    out.print(volume)

    outcomes = Table(title=L.OUTCOMES)
    outcomes.add_column(L.COL_OUTCOME)
    outcomes.add_column(L.COL_COUNT, justify="right")
    for name, count in report.by_outcome.items():
        outcomes.add_row(plain(f"{L.outcome_name(name)} ({name})"), str(count))
    out.print(outcomes)

    docs = Table(title=L.TOP_DOCS)
    docs.add_column(L.COL_DOC)
    docs.add_column(L.COL_COUNT, justify="right")
    for d in report.top_docs:
        docs.add_row(plain(d.doc), str(d.count))
    out.print(docs)

    articles = Table(title=L.TOP_ARTICLES)
    articles.add_column(L.COL_DOC)
    articles.add_column(L.COL_ARTICLE)
    articles.add_column(L.COL_COUNT, justify="right")
    for a in report.top_articles:
        articles.add_row(plain(a.doc), plain(a.article), str(a.count))
    out.print(articles)

    themes = Table(title=L.THEMES, caption=L.THEMES_NOTE_KEPT if report.kept_questions else L.THEMES_NOTE)
    themes.add_column(L.COL_THEME)
    themes.add_column(L.COL_COUNT, justify="right")
    if report.kept_questions:
        themes.add_column(L.COL_EXAMPLES)
    themes.add_column(L.COL_UNKNOWN)
    for t in report.refusal_themes:
        examples = (plain(" / ".join(t.examples)),) if report.kept_questions else ()
        themes.add_row(plain(t.label), str(t.count), *examples, plain(", ".join(t.unknown)) or "–")
    out.print(themes)
    if report.unknown_words:
        out.print(L.UNKNOWN_WORDS.format(words=plain(", ".join(f"{w.word} {w.count}" for w in report.unknown_words))))

    if report.recent_changes:
        amended = Table(title=L.RECENT_CHANGES, caption=L.RECENT_CHANGES_NOTE)
        for column in (L.COL_DOC, L.COL_ARTICLE, L.COL_EFFECTIVE, L.COL_ASKED_BEFORE, L.COL_ASKED_AFTER):
            amended.add_column(column)
        for c in report.recent_changes:
            when = L.PENDING.format(date=c.effective) if c.pending else (c.effective or c.ingested_at[:10])
            amended.add_row(plain(c.doc), plain(", ".join(c.articles)), when, str(c.asked_before),
                            "–" if c.pending else str(c.asked_after))
        out.print(amended)

    if report.disliked:
        disliked = Table(title=L.DISLIKED)
        for column in (L.COL_WHEN, L.COL_PLATFORM, L.COL_OUTCOME, L.COL_CITED):
            disliked.add_column(column)
        for d in report.disliked:
            disliked.add_row(d.at[:16].replace("T", " "), L.platform_name(d.platform),
                             L.outcome_name(d.outcome) if d.outcome else "–", plain(", ".join(d.citations)) or "–")
        out.print(disliked)


__all__ = ["print_report", "run_report"]
