"""Operators see which languages questions come in: each turn record names it, the report counts it."""

from __future__ import annotations

from pathlib import Path

from bot.report.recorder import TurnRecorder
from bot.report.records import SqliteRecordStore, TurnRecord
from bot.report.report import build_report, report_json
from rag.models import Answer, Citation, Route, Scope, Turn
from tests.fakes.clock import FakeClock

NOW = 1_700_000_000.0


def _turn(text: str, turn_id: str) -> Turn:
    return Turn(turn_id=turn_id, text=text, user="U1", conversation_key=f"slack:T1:C1:{turn_id}", scope=Scope())


async def test_each_turn_record_names_the_language_of_its_question(tmp_path: Path, clock: FakeClock) -> None:
    store = SqliteRecordStore(tmp_path / "records.sqlite")
    recorder = TurnRecorder(store, clock=clock)
    answer = Answer(text="…", route=Route.SEARCH, citations=(Citation(index=1, doc="근로기준법", article="제60조"),))
    for turn_id, text in (("a", "PC 반납은 어디로 해?"), ("b", "How long is maternity leave?"),
                          ("c", "Nghỉ thai sản được bao lâu?")):
        recorder.turn_ended(_turn(text, turn_id), platform="slack", outcome="answered", answer=answer,
                            latency_s=0.1, at=NOW)
    await recorder.close()

    records = await SqliteRecordStore(store.path, create=False).turns(0)

    assert {r.turn_id: r.language for r in records} == {"a": "ko", "b": "en", "c": "vi"}


def test_report_counts_questions_by_language() -> None:
    def record(i: int, language: str) -> TurnRecord:
        return TurnRecord(turn_id=f"t{i}", at=NOW + i, platform="slack", outcome="answered", language=language)

    turns = [record(0, "ko"), record(1, "ko"), record(2, "en"), record(3, "vi"), record(4, "")]

    data = report_json(build_report(turns, [], since=NOW, until=NOW + 60))

    assert data["by_language"] == {"ko": 2, "en": 1, "vi": 1, "unknown": 1}


def test_terminal_report_shows_the_languages_in_its_summary() -> None:
    from io import StringIO

    from rich.console import Console

    from bot.cli.report import print_report

    turns = [TurnRecord(turn_id=f"t{i}", at=NOW + i, platform="slack", outcome="answered", language=language)
             for i, language in enumerate(("ko", "ko", "en"))]
    buffer = StringIO()

    print_report(build_report(turns, [], since=NOW, until=NOW + 60), Console(file=buffer, width=120))

    assert "ko 2 · en 1" in buffer.getvalue()
