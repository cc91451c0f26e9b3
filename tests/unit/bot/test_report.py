"""The operator report on a seeded record set: every figure the CLI and /admin show is computed here."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest

from bot.report.records import CitedArticle, FeedbackRecord, TurnRecord
from bot.report.report import ReportWindowError, build_report, parse_since, percentile, report_json
from bot.report.themes import NO_NOUNS_LABEL, group_refusals
from rag.lang.lexicon import Lexicon
from rag.stages.vocabulary import KnownWords, Vocabulary

DAY = 86400.0
START = 1_767_225_600.0  # 2026-01-01 00:00 UTC
LEAVE = CitedArticle(doc="취업규칙", article="제20조")
TRAVEL = CitedArticle(doc="여비 규정", article="제6조")


def turn(i: int, *, day: int, outcome: str = "answered", platform: str = "slack", cited=(LEAVE,),
         latency_ms: float = 100.0, nouns: tuple[str, ...] = (), llm_calls: int = 0, conversation: str = "",
         tokens: int | None = None) -> TurnRecord:
    answered = outcome in ("answered", "not_covered", "small_talk")
    return TurnRecord(
        turn_id=f"t{i}", at=START + day * DAY + i, platform=platform, outcome=outcome,
        route={"small_talk": "chitchat"}.get(outcome, "search") if answered else "",
        citations=cited if outcome == "answered" else (), latency_ms=latency_ms, topic_nouns=nouns,
        llm_calls=llm_calls, conversation=conversation or f"c{i}", llm_tokens=tokens,
    )


@pytest.fixture
def week() -> tuple[list[TurnRecord], list[FeedbackRecord]]:
    """Seven days: 10 answered (6 leave, 4 travel), 4 refused (3 parking, 1 cafeteria), 2 small talk,
    1 rate-limited, 1 error, 1 busy; three platforms; 3 👍 and 2 👎 (one naming no turn)."""
    turns = [
        *(turn(i, day=i % 7, latency_ms=100 + 10 * i, llm_calls=2) for i in range(6)),
        *(turn(6 + i, day=2, platform="teams", cited=(TRAVEL,), latency_ms=300, llm_calls=2) for i in range(4)),
        turn(10, day=3, outcome="not_covered", nouns=("요금", "주차장"), latency_ms=50, platform="web"),
        turn(11, day=3, outcome="not_covered", nouns=("등록", "주차"), latency_ms=50, platform="web"),
        turn(12, day=4, outcome="not_covered", nouns=("위치", "주차장"), latency_ms=50),
        turn(13, day=5, outcome="not_covered", nouns=("구내식당", "메뉴"), latency_ms=50),
        turn(14, day=6, outcome="small_talk", latency_ms=5),
        turn(15, day=6, outcome="small_talk", latency_ms=5, platform="teams"),
        turn(16, day=6, outcome="rate_limited", latency_ms=1),
        turn(17, day=6, outcome="error", latency_ms=2000),
        turn(18, day=6, outcome="busy", latency_ms=3000),
        turn(99, day=-3),  # before the window
    ]
    feedback = [
        FeedbackRecord(at=START + 6 * DAY, platform="slack", rating="up", turn_id="t0"),
        FeedbackRecord(at=START + 6 * DAY, platform="slack", rating="up", turn_id="t1"),
        FeedbackRecord(at=START + 6 * DAY, platform="teams", rating="up", turn_id="t6"),
        FeedbackRecord(at=START + 6 * DAY + 1, platform="teams", rating="down", turn_id="t7"),
        FeedbackRecord(at=START + 6 * DAY + 2, platform="web", rating="down", conversation="c10"),
    ]
    return turns, feedback


def report_of(week, **kwargs):
    turns, feedback = week
    return build_report(turns, feedback, since=START, until=START + 7 * DAY - 1, tz=UTC, **kwargs)


class TestSince:
    @pytest.mark.parametrize("bad", ["", "7", "d7", "-1d", "0d", "7 days", "1y"])
    def test_bad_windows_say_what_to_write(self, bad: str):
        with pytest.raises(ReportWindowError, match="7d, 24h or 2w"):
            parse_since(bad)

    def test_days_hours_and_weeks(self):
        assert parse_since("7d") == timedelta(days=7)
        assert parse_since("36h") == timedelta(hours=36)
        assert parse_since("2w") == timedelta(days=14)


class TestReportOnAWeek:
    def test_volume_by_outcome_platform_and_day(self, week):
        report = report_of(week)

        assert report.turns == 19
        assert report.by_outcome == {"answered": 10, "hedged": 0, "not_covered": 4, "small_talk": 2,
                                     "rate_limited": 1, "error": 1, "busy": 1}
        assert report.by_platform == {"slack": 12, "teams": 5, "web": 2}
        assert [d.day for d in report.by_day] == [f"2026-01-0{d}" for d in range(1, 8)]
        assert [d.total for d in report.by_day] == [1, 1, 5, 3, 2, 2, 5]
        assert report.by_day[2].by_platform == {"slack": 1, "teams": 4}

    def test_top_articles_and_refusal_rate(self, week):
        report = report_of(week)

        assert [(a.doc, a.article, a.count) for a in report.top_articles] == [
            ("취업규칙", "제20조", 6), ("여비 규정", "제6조", 4)]
        assert report.refusal_rate == round(4 / 14, 4)

    def test_refusals_are_grouped_into_themes(self, week):
        report = report_of(week)

        assert [(t.label, t.count) for t in report.refusal_themes] == [("주차", 3), ("구내식당", 1)]

    def test_feedback_and_the_disliked_answers_with_what_they_cited(self, week):
        report = report_of(week)

        assert (report.feedback.up, report.feedback.down) == (3, 2)
        newest, older = report.disliked
        assert (newest.turn_id, newest.outcome, newest.citations) == ("t10", "not_covered", ())  # by conversation
        assert (older.turn_id, older.outcome, older.citations) == ("t7", "answered", ("여비 규정 제6조",))

    def test_latency_and_llm_calls_over_answered_turns_only(self, week):
        report = report_of(week)

        answered = sorted([100.0 + 10 * i for i in range(6)] + [300.0] * 4 + [50.0] * 4 + [5.0] * 2)
        assert report.latency_ms.p50 == answered[7]  # nearest rank of 16 values
        assert report.latency_ms.p95 == 300.0  # the error (2000 ms) and busy (3000 ms) turns are not answers
        assert report.llm_calls_per_answer == round(20 / 16, 2)
        assert report.llm_tokens_per_answer is None

    def test_json_has_the_contract_keys(self, week):
        data = report_json(report_of(week))

        assert {"turns", "by_outcome", "by_platform", "top_articles", "refusal_themes", "feedback",
                "latency_ms"} <= set(data)
        assert data["top_articles"][0] == {"doc": "취업규칙", "article": "제20조", "count": 6}
        assert data["refusal_themes"][0]["label"] == "주차" and data["refusal_themes"][0]["count"] == 3
        assert data["feedback"] == {"up": 3, "down": 2}
        assert set(data["latency_ms"]) == {"p50", "p95"}

    def test_empty_window_has_zero_counts_and_no_latency(self):
        report = build_report([], [], since=START, until=START + DAY, tz=UTC)

        assert report.turns == 0 and report.by_outcome["answered"] == 0
        assert report.latency_ms.p50 is None and report.refusal_rate is None


class TestThemes:
    def test_questions_without_nouns_are_grouped_last_as_other(self):
        themes = group_refusals([(), ("주차",), ("주차", "요금"), ()])

        assert [(t.label, t.count) for t in themes] == [("주차", 2), (NO_NOUNS_LABEL, 2)]

    def test_generic_nouns_never_name_a_theme_when_a_specific_one_exists(self):
        themes = group_refusals([("시간", "통근버스"), ("시간", "구내식당"), ("시간", "통근버스", "노선")])

        assert [(t.label, t.count) for t in themes] == [("통근버스", 2), ("구내식당", 1)]

    def test_a_second_noun_names_the_theme_when_most_questions_share_it(self):
        themes = group_refusals([("동호회", "지원금"), ("동호회", "지원금", "가입"), ("동호회", "회식")])

        assert themes[0].label == "동호회 · 지원금" and themes[0].count == 3


def test_percentile_is_nearest_rank():
    assert percentile([], 0.5) is None
    assert percentile([5.0], 0.95) == 5.0
    assert percentile(list(range(1, 21)), 0.95) == 19


async def test_the_report_is_built_off_the_event_loop(tmp_path, monkeypatch) -> None:
    """/admin awaits `load_report`: theme grouping is quadratic in distinct nouns and must not stall answers."""
    import threading
    from datetime import timedelta

    import bot.report.report as report_module
    from bot.report.records import SqliteRecordStore

    built_on: list[int] = []
    real = report_module.build_report

    def recording(*args, **kwargs):
        built_on.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(report_module, "build_report", recording)

    report = await report_module.load_report(SqliteRecordStore(tmp_path / "records.sqlite"),
                                             window=timedelta(days=7), now=1_700_000_000.0)

    assert report.turns == 0
    assert built_on and built_on[0] != threading.get_ident()


def test_kept_questions_reach_the_terminal_without_control_sequences() -> None:
    from bot.cli.report import plain

    shown = plain("\x1b]0;owned\x07연차 \x1b[2J며칠\x9b31m? [bold]")

    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "연차" in shown and "며칠" in shown
    assert "\\[bold]" in shown  # rich markup stays text


class TestUnknownWords:
    def test_themes_name_the_words_neither_the_index_nor_the_vocabulary_knows(self, week):
        known = KnownWords(["주차", "요금", "위치"], Vocabulary.load(Lexicon(None)))

        report = report_of(week, known=known)

        parking = report.refusal_themes[0]
        assert parking.label == "주차" and parking.unknown == ()
        assert ("주차장", 2) in [(w.word, w.count) for w in report.unknown_words]
        assert "요금" not in [w.word for w in report.unknown_words]
        assert report_json(report)["unknown_words"][0] == {"word": "주차장", "count": 2}

    def test_without_the_index_nothing_is_listed(self, week):
        report = report_of(week)

        assert report.unknown_words == [] and all(t.unknown == () for t in report.refusal_themes)
