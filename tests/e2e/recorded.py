"""What a running server recorded: its turn records and votes, read back from `records.sqlite` in its data dir."""

from __future__ import annotations

from pathlib import Path

from bot.report.records import SQLITE_FILE, FeedbackRecord, SqliteRecordStore, TurnRecord
from tests.e2e.conftest import RunningServer
from tests.polling import wait_until


async def recorded_votes(server: RunningServer, count: int = 1) -> tuple[dict[str, TurnRecord], list[FeedbackRecord]]:
    """The turns (by turn id) and the votes, once at least `count` votes are written."""
    assert server.runtime.recorder is not None, "records are off (REGBOT_RECORDS_DAYS=0)"
    reader = SqliteRecordStore(Path(server.runtime.settings.data_dir) / SQLITE_FILE, create=False)

    async def written() -> bool:
        await server.runtime.recorder.flush()
        return len(await reader.feedback(0)) >= count

    try:
        await wait_until(written, timeout_s=10)
        return {t.turn_id: t for t in await reader.turns(0)}, await reader.feedback(0)
    finally:
        await reader.close()
