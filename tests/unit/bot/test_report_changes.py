"""The report's recent amendments: which changes count as recent, and the questions on either side of each."""

from __future__ import annotations

from datetime import datetime

from bot.report.admin import render_report_html
from bot.report.records import CitedArticle, TurnRecord
from bot.report.report import build_report, report_json
from rag.knowledge.versions import ArticleChange, DocumentChange

NOV_28 = datetime(2026, 11, 28, 12).timestamp()
DAY_S = 86400.0


def change(effective: str, *, ingested: str = "2026-11-10T09:00:00+00:00", state: str = "in_force",
           article: str = "제20조") -> DocumentChange:
    return DocumentChange(doc="취업규칙", collection="default", from_version=1, to_version=2, ingested_at=ingested,
                          effective=effective, state=state,
                          articles=(ArticleChange(article=article, change="changed", before="15일", after="16일"),))


def turn(at: float, article: str = "제20조") -> TurnRecord:
    return TurnRecord(turn_id=f"t{at}", at=at, platform="slack", outcome="answered", route="search",
                      citations=(CitedArticle(doc="취업규칙", article=article),))


def test_questions_citing_the_article_are_counted_before_and_after_the_new_text_answered():
    turns = [turn(NOV_28 - 25 * DAY_S), turn(NOV_28 - 20 * DAY_S), turn(NOV_28 - 2 * DAY_S),
             turn(NOV_28 - DAY_S, article="제21조")]
    report = build_report(turns, [], since=NOV_28 - 30 * DAY_S, until=NOV_28,
                          changes=[change("2026-11-01", ingested="2026-11-05T09:00:00+00:00")], recent_days=90)
    [amended] = report_json(report)["recent_changes"]
    assert (amended["doc"], amended["articles"], amended["effective"]) == ("취업규칙", ["제20조"], "2026-11-01")
    # Nov 3 was answered from the old text (ingested Nov 5); Nov 8 and Nov 26 from the new; 제21조 is not counted.
    assert (amended["asked_before"], amended["asked_after"], amended["pending"]) == (1, 2, False)


def test_an_old_amendment_is_left_out_and_a_held_one_is_shown_as_pending():
    report = build_report([turn(NOV_28 - DAY_S)], [], since=NOV_28 - 7 * DAY_S, until=NOV_28, recent_days=90,
                          changes=[change("2026-01-01"), change("2027-01-01", state="pending")])
    assert [(c.effective, c.pending, c.asked_before) for c in report.recent_changes] == [("2027-01-01", True, 1)]
    page = render_report_html(report)
    assert 'data-section="recent-changes"' in page and "2027-01-01 시행 예정" in page


def test_a_report_without_changes_has_an_empty_list_and_no_section():
    report = build_report([turn(NOV_28)], [], since=NOV_28 - DAY_S, until=NOV_28)
    assert report_json(report)["recent_changes"] == []
    assert 'data-section="recent-changes"' not in render_report_html(report)
