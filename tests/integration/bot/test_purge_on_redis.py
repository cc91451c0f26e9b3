"""`regbot report --purge --all` on Redis leaves no vote and no raw user id behind: votes live only in the turn
records (salted ids, the records' retention and purge), and the vote list earlier releases kept is deleted too."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis
from rich.console import Console

from adapters.base import Feedback
from bot.cli.report import run_report
from bot.report.records import LEGACY_FEEDBACK_KEY
from bot.server.server import build_runtime
from rag.models import Turn
from testkit import make_settings

RAW_USER = "U0RAWUSER42"
THREAD = "slack:T0TEAM:C0RULES:1712345678.000100"
DB = 9  # a database of its own on the session's redis-server


@pytest.fixture
def redis_url(redis_server) -> str:
    url = f"redis://127.0.0.1:{redis_server.port}/{DB}"
    redis.Redis.from_url(url).flushdb()
    return url


def everything_in(url: str) -> dict[str, str]:
    """Every key of the database with its value (lists, sets, hashes and strings), as text."""
    client = redis.Redis.from_url(url, decode_responses=True)
    dump: dict[str, str] = {}
    for key in client.scan_iter():
        kind = client.type(key)
        if kind == "list":
            value: object = client.lrange(key, 0, -1)
        elif kind == "zset":
            value = client.zrange(key, 0, -1)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "set":
            value = sorted(client.smembers(key))
        else:
            value = client.get(key)
        dump[key] = json.dumps(value, ensure_ascii=False)
    return dump


async def test_purge_all_leaves_no_vote_and_no_raw_user_id(sample_components, redis_url, tmp_path) -> None:
    settings = make_settings(tmp_path / "data", REDIS_URL=redis_url)
    runtime = build_runtime(settings, sample_components)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        turn = Turn(turn_id="t-purge", text="연차휴가는 며칠이야?", user=RAW_USER, conversation_key=THREAD)
        events = [event async for event in runtime.service.answer(turn)]
        assert events[-1].kind.value == "done"
        await runtime.service.record_feedback(Feedback(platform="slack", conversation_key=THREAD, user=RAW_USER,
                                                       rating="down", turn_id="t-purge", comment="틀렸어요"))
        assert runtime.recorder is not None
        await runtime.recorder.flush()
        # An installation upgraded from a release that kept votes in a list with the raw platform id (the
        # recorder's hourly purge also deletes it; this one was written after that purge).
        client.rpush(LEGACY_FEEDBACK_KEY, json.dumps({"user": RAW_USER, "rating": "down", "question": "연차?"}))

        before = everything_in(redis_url)
        assert "down" in before["regbot:records:feedback"] and RAW_USER in before[LEGACY_FEEDBACK_KEY]
        assert not any(RAW_USER in value for key, value in before.items() if key != LEGACY_FEEDBACK_KEY)
        assert not any(RAW_USER in key for key in before)  # buckets and claims: salted, already before

        out, err = Console(record=True, width=200), Console(record=True, width=200)
        # The CLI runs its own event loop, as `regbot report` does beside a running server.
        assert await asyncio.to_thread(run_report, settings, since="7d", as_json=False, html_file=None, purge=True,
                                       purge_all=True, out=out, err=err) == 0
    finally:
        if runtime.recorder is not None:
            await runtime.recorder.close()
        await runtime.store.close_backend()

    after = everything_in(redis_url)
    assert not any(RAW_USER in key or RAW_USER in value for key, value in after.items())
    assert not any("rating" in value or "feedback" in key for key, value in after.items())
