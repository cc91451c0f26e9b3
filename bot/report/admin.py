"""The operator report as an HTML page: `GET /admin` on the server and `regbot report --html FILE`.

    GET /admin[?since=7d]         Authorization: Bearer $REGBOT_ADMIN_TOKEN → the page (401 otherwise; the route
                                  exists only when a token is configured, so 404 without one)
    GET /admin/static/admin.css   the stylesheet alone (the page inlines it, so a copy saved with curl renders
                                  styled; the page's CSP allows exactly that stylesheet by its hash)

Server-rendered: the figures are in the HTML and the charts are inline SVG, so the page needs no script and runs
under the playground's CSP. Every record-derived string is escaped.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from html import escape
from importlib import resources
from typing import TYPE_CHECKING

from aiohttp import web

from adapters.web import SECURITY_HEADERS, published_only
from bot.report import labels as L
from bot.report.charts import PALETTE, horizontal_bars, stacked_columns
from bot.report.records import RecordStore, open_record_store
from bot.report.report import Report, ReportWindowError, load_report, parse_since

if TYPE_CHECKING:
    from bot.server.runtime import Runtime
    from rag.knowledge.versions import DocumentChange

logger = logging.getLogger(__name__)

ADMIN_ROUTE = "/admin"
STYLESHEET_ROUTE = "/admin/static/admin.css"
DEFAULT_WINDOW = "7d"


def stylesheet() -> str:
    return resources.files("bot").joinpath("static", "admin.css").read_text(encoding="utf-8")


def inline_style_headers(css: str) -> dict[str, str]:
    """The security headers, with the CSP also allowing the one inline `<style>` whose text is `css` (by hash)."""
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()
    csp = SECURITY_HEADERS["Content-Security-Policy"].replace("style-src 'self'", f"style-src 'self' 'sha256-{digest}'")
    return {**SECURITY_HEADERS, "Content-Security-Policy": csp}


class AdminPage:
    """`GET /admin`: the report over the records the server writes, behind a bearer token.

    Args:
        store: the records (the recorder's store, so the page shows what `regbot report` shows).
        token: REGBOT_ADMIN_TOKEN; compared in constant time.
        public_hosts: host names the page answers under (`REGBOT_PUBLIC_HOSTS`, as the playground).
        clock: epoch seconds (injectable).
    """

    def __init__(self, store: RecordStore, *, token: str,
                 public_hosts: Iterable[str] = ("localhost", "127.0.0.1", "::1"),
                 clock: Callable[[], float] = time.time,
                 changes: Callable[[], Sequence[DocumentChange]] | None = None, recent_days: int = 90) -> None:
        if not token:
            raise ValueError("the admin page needs a token (REGBOT_ADMIN_TOKEN)")
        self._store = store
        self._public_hosts = frozenset(host.strip().strip("[]").lower() for host in public_hosts if host.strip())
        self._expected = f"Bearer {token}".encode()
        self._clock = clock
        self._changes = changes  # the index's change record, for the "최근 개정" section
        self._recent_days = recent_days
        self._css = stylesheet()
        self._page_headers = inline_style_headers(self._css)

    @classmethod
    def for_runtime(cls, runtime: Runtime) -> AdminPage:
        store = runtime.recorder.store if runtime.recorder else open_record_store(runtime.settings, create=False)
        changes = runtime.components.changes
        return cls(store, token=runtime.settings.admin_token, public_hosts=runtime.settings.public_host_names,
                   changes=changes.all if changes is not None else None,
                   recent_days=runtime.settings.recent_change_days)

    def attach(self, app: web.Application) -> None:
        # The playground's host rules: answers only under REGBOT_PUBLIC_HOSTS.
        app.router.add_get(ADMIN_ROUTE, published_only(self.page, self._public_hosts))
        app.router.add_get(STYLESHEET_ROUTE, published_only(self.css, self._public_hosts))

    async def page(self, request: web.Request) -> web.Response:
        given = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(given, self._expected):
            return web.Response(status=401, text="401: Authorization: Bearer <REGBOT_ADMIN_TOKEN> required",
                                headers={"WWW-Authenticate": 'Bearer realm="regbot admin"', **SECURITY_HEADERS})
        try:
            window = parse_since(request.query.get("since", DEFAULT_WINDOW))
        except ReportWindowError as bad:
            return web.Response(status=400, text=str(bad).replace("--since", "since"), headers=SECURITY_HEADERS)
        try:
            changes = self._changes() if self._changes is not None else ()
            report = await load_report(self._store, window=window, now=self._clock(), changes=changes,
                                       recent_days=self._recent_days)
        except Exception as exc:  # the records store is unreachable: say so, never a traceback
            logger.warning("admin report failed: %s", exc.__class__.__name__)
            return web.Response(status=503, text="503: the turn records cannot be read right now",
                                headers=SECURITY_HEADERS)
        html = render_report_html(report)  # stylesheet inlined: `curl … > report.html` opens styled
        return web.Response(text=html, content_type="text/html", charset="utf-8", headers=self._page_headers)

    async def css(self, request: web.Request) -> web.Response:
        return web.Response(text=self._css, content_type="text/css", charset="utf-8", headers=SECURITY_HEADERS)


# --- rendering ------------------------------------------------------------------------------------------------


def _number(value: float | None, unit: str = "") -> str:
    if value is None:
        return L.NOT_AVAILABLE
    text = f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:,.2f}".rstrip("0")
    return f"{text}{unit}"


def _percent(value: float | None) -> str:
    return L.NOT_AVAILABLE if value is None else f"{value * 100:.1f}%"


def _table(headers: Iterable[tuple[str, bool]], rows: Iterable[Iterable[tuple[str, bool]]], *, name: str) -> str:
    """A table whose cells are (text, numeric); text is escaped here."""
    head = "".join(f'<th{" class=num" if num else ""}>{escape(h)}</th>' for h, num in headers)
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if num else ""}>{escape(c)}</td>' for c, num in row) + "</tr>"
        for row in rows
    )
    return f'<table data-table="{name}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _section(title: str, body: str, *, wide: bool = False, name: str) -> str:
    cls = ' class="wide"' if wide else ""
    return f'<section{cls} data-section="{name}"><h2>{escape(title)}</h2>{body}</section>'


def render_report_html(report: Report, *, stylesheet_href: str | None = None) -> str:
    """The whole page; with no `stylesheet_href` the stylesheet is inlined (a file that opens anywhere)."""
    cards = [
        ("turns", L.TURNS, f"{report.turns:,}"),
        ("answered", L.ANSWERED, f"{report.by_outcome.get('answered', 0):,}"),
        ("refusal_rate", L.REFUSAL_RATE, _percent(report.refusal_rate)),
        ("feedback_up", L.FEEDBACK_UP, f"{report.feedback.up:,}"),
        ("feedback_down", L.FEEDBACK_DOWN, f"{report.feedback.down:,}"),
        ("latency_p50", L.LATENCY_P50, _number(report.latency_ms.p50, " ms")),
        ("latency_p95", L.LATENCY_P95, _number(report.latency_ms.p95, " ms")),
        ("llm_calls", L.LLM_CALLS, _number(report.llm_calls_per_answer)),
        ("llm_tokens", L.LLM_TOKENS, _number(report.llm_tokens_per_answer)),
        ("cache_hit_rate", L.CACHE_HIT_RATE, _percent(report.cache_hit_rate)),
    ]
    card_html = "".join(
        f'<div class="card"><dt>{escape(label)}</dt><dd data-metric="{key}">{escape(value)}</dd></div>'
        for key, label, value in cards
    )
    sections = [
        _section(L.VOLUME_CHART, _volume(report), wide=True, name="volume"),
        _section(L.TOP_ARTICLES, _top_articles(report), name="top-articles"),
        _section(L.THEMES, _themes(report), name="themes"),
        _section(L.OUTCOMES, _outcomes(report), name="outcomes"),
        _section(L.FEEDBACK_CHART, _feedback(report), name="feedback"),
        _section(L.DISLIKED, _disliked(report), wide=True, name="disliked"),
    ]
    if report.recent_changes:
        sections.append(_section(L.RECENT_CHANGES, _recent_changes(report), wide=True, name="recent-changes"))
    if stylesheet_href:
        style = f'<link rel="stylesheet" href="{escape(stylesheet_href)}">'
    else:
        style = f"<style>{stylesheet()}</style>"
    period = f"{L.PERIOD}: {report.since[:16].replace('T', ' ')} – {report.until[:16].replace('T', ' ')}"
    return (
        '<!doctype html><html lang="ko"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
        f"<title>{escape(L.TITLE)}</title>{style}</head><body><main>"
        f"<header><h1>{escape(L.TITLE)}</h1><p>{escape(period)}</p></header>"
        f'<dl class="cards">{card_html}</dl><div class="grid">{"".join(sections)}</div>'
        "</main></body></html>"
    )


def _recent_changes(report: Report) -> str:
    rows = [[(c.doc, False), (", ".join(c.articles), False),
             (L.PENDING.format(date=c.effective) if c.pending else (c.effective or c.ingested_at[:10]), False),
             (f"{c.asked_before}", True), ("–" if c.pending else f"{c.asked_after}", True)]
            for c in report.recent_changes]
    headers = [(L.COL_DOC, False), (L.COL_ARTICLE, False), (L.COL_EFFECTIVE, False), (L.COL_ASKED_BEFORE, True),
               (L.COL_ASKED_AFTER, True)]
    return f'<p class="note">{escape(L.RECENT_CHANGES_NOTE)}</p>' + _table(headers, rows, name="recent-changes")


def _empty() -> str:
    return f'<p class="empty">{escape(L.NO_DATA)}</p>'


def _volume(report: Report) -> str:
    if not report.turns:
        return _empty()
    platforms = list(report.by_platform)
    days = [d.day for d in report.by_day]
    series = [(L.platform_name(p), [d.by_platform.get(p, 0) for d in report.by_day]) for p in platforms]
    return stacked_columns(days, series, label=L.VOLUME_CHART)


def _top_articles(report: Report) -> str:
    if not report.top_articles:
        return _empty()
    rows = [(f"{a.doc} {a.article}".strip(), a.count) for a in report.top_articles]
    return horizontal_bars(rows, label=L.TOP_ARTICLES, color=PALETTE[0])


def _themes(report: Report) -> str:
    if not report.refusal_themes:
        return _empty()
    note = L.THEMES_NOTE_KEPT if report.kept_questions else L.THEMES_NOTE
    chart = horizontal_bars([(t.label, t.count) for t in report.refusal_themes], label=L.THEMES, color=PALETTE[2])
    body = f'<p class="note">{escape(note)}</p>{chart}'
    if report.kept_questions:
        rows = [[(t.label, False), (f"{t.count}", True), (" / ".join(t.examples), False)]
                for t in report.refusal_themes]
        body += _table([(L.COL_THEME, False), (L.COL_COUNT, True), (L.COL_EXAMPLES, False)], rows, name="themes")
    return body


def _outcomes(report: Report) -> str:
    rows = [(L.outcome_name(name), count) for name, count in report.by_outcome.items()]
    chart = horizontal_bars(rows, label=L.OUTCOMES, colors=PALETTE)
    platforms = _table([(L.COL_PLATFORM, False), (L.COL_COUNT, True)],
                       [[(L.platform_name(p), False), (f"{n}", True)] for p, n in report.by_platform.items()],
                       name="platforms")
    return chart + platforms


def _feedback(report: Report) -> str:
    if not (report.feedback.up or report.feedback.down):
        return _empty()
    rows = [(L.FEEDBACK_UP, report.feedback.up), (L.FEEDBACK_DOWN, report.feedback.down)]
    return horizontal_bars(rows, label=L.FEEDBACK_CHART, colors=(PALETTE[1], PALETTE[4]))


def _disliked(report: Report) -> str:
    if not report.disliked:
        return _empty()
    headers = [(L.COL_WHEN, False), (L.COL_PLATFORM, False), (L.COL_OUTCOME, False), (L.COL_CITED, False)]
    with_text = any(d.question or d.comment for d in report.disliked)
    if with_text:
        headers += [(L.COL_QUESTION, False), (L.COL_COMMENT, False)]
    rows = []
    for d in report.disliked:
        row = [(d.at[:16].replace("T", " "), False), (L.platform_name(d.platform), False),
               (L.outcome_name(d.outcome) if d.outcome else L.NOT_AVAILABLE, False),
               (", ".join(d.citations) or L.NOT_AVAILABLE, False)]
        if with_text:
            row += [(d.question, False), (d.comment, False)]
        rows.append(row)
    return _table(headers, rows, name="disliked")


__all__ = ["ADMIN_ROUTE", "STYLESHEET_ROUTE", "AdminPage", "render_report_html"]
