"""Server-rendered SVG charts for the report page: no script, no CDN, readable under a strict CSP.

Colours are SVG presentation attributes (a CSP without 'unsafe-inline' still allows them); fonts and sizes come
from the page's stylesheet. Every text is escaped; every bar carries its value in `data-value` and a <title>.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#2563eb", "#16a34a", "#f59e0b", "#9333ea", "#dc2626", "#0891b2")


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _nice_max(value: int) -> int:
    """A round axis maximum at or above `value` (1, 2, 5 × 10ⁿ)."""
    if value <= 0:
        return 1
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def stacked_columns(days: Sequence[str], series: Sequence[tuple[str, Sequence[int]]], *, label: str) -> str:
    """Columns per day, stacked by series (platforms), with a y axis, day ticks and a legend."""
    width, height = 720, 260
    left, right, top, bottom = 44, 12, 16, 56
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(values[i] for _, values in series) for i in range(len(days))]
    step = _nice_max(math.ceil(max(totals, default=0) / 4))  # whole-number gridlines, at most four steps
    steps = max(1, math.ceil(max(totals, default=0) / step))
    top_value = step * steps
    slot = plot_w / max(1, len(days))
    bar_w = max(2.0, min(36.0, slot * 0.7))
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">']
    for tick in range(steps + 1):
        value = step * tick
        y = top + plot_h - plot_h * tick / steps
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{_fmt(y)}" y2="{_fmt(y)}" stroke="#e5e7eb"/>')
        parts.append(f'<text class="axis" x="{left - 6}" y="{_fmt(y + 4)}" text-anchor="end">{_fmt(value)}</text>')
    every = max(1, round(len(days) / 10))  # at most ~10 day labels
    for i, day in enumerate(days):
        x = left + slot * i + (slot - bar_w) / 2
        y = top + plot_h
        for s, (name, values) in enumerate(series):
            if not values[i]:
                continue
            h = plot_h * values[i] / top_value
            y -= h
            parts.append(
                f'<rect class="bar" x="{_fmt(x)}" y="{_fmt(y)}" width="{_fmt(bar_w)}" height="{_fmt(h)}" '
                f'fill="{PALETTE[s % len(PALETTE)]}" data-day="{escape(day)}" data-series="{escape(name)}" '
                f'data-value="{values[i]}"><title>{escape(day)} {escape(name)}: {values[i]}</title></rect>'
            )
        if i % every == 0 or i == len(days) - 1:
            parts.append(f'<text class="axis" x="{_fmt(x + bar_w / 2)}" y="{top + plot_h + 16}" '
                         f'text-anchor="middle">{escape(day[5:])}</text>')
    x = left
    for s, (name, _) in enumerate(series):
        parts.append(f'<rect x="{x}" y="{height - 22}" width="12" height="12" fill="{PALETTE[s % len(PALETTE)]}"/>')
        parts.append(f'<text class="legend" x="{x + 17}" y="{height - 12}">{escape(name)}</text>')
        x += 24 + 13 * len(name)
    parts.append("</svg>")
    return "".join(parts)


def horizontal_bars(rows: Sequence[tuple[str, int]], *, label: str, color: str = PALETTE[0],
                    colors: Sequence[str] = ()) -> str:
    """One labelled bar per row, longest first as given; the value is written after each bar."""
    # Drawn at about the width of a half-page card on a laptop, so 13 px text stays 13 px.
    width, row_h, label_w = 520, 30, 180
    height = max(1, len(rows)) * row_h + 8
    top_value = max((value for _, value in rows), default=0) or 1
    bar_space = width - label_w - 56
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">']
    for i, (name, value) in enumerate(rows):
        y = 4 + i * row_h
        w = bar_space * value / top_value
        fill = colors[i % len(colors)] if colors else color
        shown = name if len(name) <= 14 else name[:13] + "…"  # Hangul is ~13 px wide: 14 fit the label column
        parts.append(f'<text class="label" x="{label_w - 8}" y="{y + 19}" text-anchor="end">'
                     f'<title>{escape(name)}</title>{escape(shown)}</text>')
        parts.append(f'<rect class="bar" x="{label_w}" y="{y + 4}" width="{_fmt(max(w, 1.0))}" height="{row_h - 10}" '
                     f'rx="3" fill="{fill}" data-label="{escape(name)}" data-value="{value}">'
                     f'<title>{escape(name)}: {value}</title></rect>')
        parts.append(f'<text class="value" x="{_fmt(label_w + max(w, 1.0) + 6)}" y="{y + 19}">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["PALETTE", "horizontal_bars", "stacked_columns"]
