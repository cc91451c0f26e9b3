"""The report page's HTML: record-derived text is escaped, charts are SVG, the file form is standalone."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

from bot.cli import main as regbot
from bot.report.admin import render_report_html
from bot.report.records import CitedArticle, FeedbackRecord, TurnRecord
from bot.report.report import build_report

HOSTILE = '<script>alert("x")</script>'


def _report(question: str = ""):
    turns = [
        TurnRecord(turn_id="a", at=100.0, platform="slack", outcome="answered", route="search",
                   citations=(CitedArticle(doc=HOSTILE, article="제1조"),), latency_ms=80),
        TurnRecord(turn_id="b", at=200.0, platform="web", outcome="not_covered", route="search",
                   topic_nouns=(HOSTILE,), question=question, latency_ms=40),
    ]
    votes = [FeedbackRecord(at=300.0, platform="slack", rating="down", turn_id="a", comment=HOSTILE)]
    return build_report(turns, votes, since=0.0, until=86400.0, tz=UTC)


def test_record_text_never_becomes_markup():
    page = render_report_html(_report(question=HOSTILE), stylesheet_href="/admin/static/admin.css")

    assert "<script" not in page
    assert "&lt;script&gt;" in page
    assert page.count("<svg") >= 4
    assert '<link rel="stylesheet" href="/admin/static/admin.css">' in page and "<style>" not in page


def test_html_file_is_standalone_with_the_stylesheet_inlined(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("REGBOT_DATA_DIR", str(tmp_path / "no-records-yet"))
    out = tmp_path / "report.html"

    assert regbot(["report", "--html", str(out), "--since", "2w"]) == 0

    page = out.read_text(encoding="utf-8")
    assert "<style>" in page and 'data-metric="turns">0<' in page
    assert "아직 기록이 없습니다." in page
    assert not (tmp_path / "no-records-yet").exists()  # a read command never creates the data dir


def test_bad_window_is_one_line_on_stderr_and_exit_2(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("REGBOT_DATA_DIR", str(tmp_path))

    assert regbot(["report", "--since", "last-week"]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "7d, 24h or 2w" in err
