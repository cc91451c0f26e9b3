"""The report's recent amendments (`recent_changes` in `regbot report --json`, "최근 개정" on `/admin`): each change
of a regulation dated within REGBOT_RECENT_CHANGE_DAYS (or still to come into force), and how many questions of the
report's window cited its changed articles before and after the bot started answering from the new text.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from datetime import UTC, date, datetime, timedelta

from pydantic import BaseModel, ConfigDict

from bot.config import Settings
from bot.report.records import TurnRecord
from rag.knowledge.versions import DocumentChange


class AmendmentActivity(BaseModel):
    """One amendment and the questions that touched its articles on each side of it."""

    model_config = ConfigDict(frozen=True)

    doc: str
    articles: list[str]  # 제20조, …: the added and changed articles (and removed ones)
    effective: str  # YYYY-MM-DD, or "" when the text names none
    ingested_at: str
    pending: bool  # not in force yet
    asked_before: int  # questions in the window citing these articles before the new text answered
    asked_after: int


def recent_changes(changes: Sequence[DocumentChange], turns: Sequence[TurnRecord], *, since: float, until: float,
                   recent_days: int) -> list[AmendmentActivity]:
    """Amendments dated within `recent_days` before `until` (or pending), newest first, with the window's counts."""
    first_day = (datetime.fromtimestamp(until).date() - timedelta(days=recent_days)).isoformat()
    window = [t for t in turns if since <= t.at <= until]
    out: list[AmendmentActivity] = []
    for change in reversed(changes):
        pending = change.state == "pending"
        if not pending and change.dated < first_day:
            continue
        old = {(change.doc, a.previous_article or a.article) for a in change.articles}
        new = {(change.doc, a.article) for a in change.articles if a.change != "removed"}
        boundary = _answered_from(change)
        before = sum(1 for t in window if (pending or t.at < boundary) and _cites(t, old))
        after = 0 if pending else sum(1 for t in window if t.at >= boundary and _cites(t, new))
        out.append(AmendmentActivity(doc=change.doc, articles=[a.article for a in change.articles],
                                     effective=change.effective, ingested_at=change.ingested_at, pending=pending,
                                     asked_before=before, asked_after=after))
    return out


def changes_in_data_dir(settings: Settings) -> list[DocumentChange]:
    """The change record of the data dir's index, or [] when there is no index (nothing is created)."""
    index = settings.data_dir / "index.sqlite"
    if not index.is_file():
        return []
    import sqlite3

    from rag.knowledge.store import ChunkStore
    from rag.knowledge.versions import ChangeLog

    try:
        return ChangeLog(ChunkStore(index)).all()
    except (sqlite3.Error, OSError):  # an unreadable index costs the report this section, not the report
        return []


def _answered_from(change: DocumentChange) -> float:
    """When answers switched to the new text: the later of its effective day and its ingest."""
    moments = []
    with suppress(ValueError):
        moments.append(datetime.fromisoformat(change.ingested_at).timestamp())
    if change.effective:
        with suppress(ValueError):
            day = date.fromisoformat(change.effective)
            moments.append(datetime(day.year, day.month, day.day).timestamp())
    return max(moments, default=datetime.now(UTC).timestamp())


def _cites(turn: TurnRecord, articles: set[tuple[str, str]]) -> bool:
    return any((c.doc, c.article) in articles for c in turn.citations)
