"""Turn records in a real redis-server: what the keys hold, and `regbot report` reading them while a service writes."""

from __future__ import annotations

import asyncio
import json

import pytest
from redis.asyncio import Redis

from adapters.base import Feedback
from bot.cli import main as regbot
from bot.report.recorder import TurnRecorder
from bot.report.records import RedisRecordStore
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import StateStores
from rag.models import Turn
from tests.fakes.pipeline import ScriptedPipeline

QUESTION = "육아휴직 중에 급여가 나오나요 김비밀"
RECORDS_DB = 7  # a database of its own: the report reads the fixed `regbot:records:` keys


@pytest.fixture
async def records_url(redis_server) -> str:
    url = redis_server.url.rsplit("/", 1)[0] + f"/{RECORDS_DB}"
    client = Redis.from_url(url)
    await client.flushdb()
    await client.aclose()
    return url


async def serve_turns(make_redis, store: RedisRecordStore, *, keep_questions: bool = False) -> TurnRecorder:
    recorder = TurnRecorder(store, keep_questions=keep_questions)
    service = BotService(pipeline=ScriptedPipeline(), store=StateStores.on_redis(make_redis()), metrics=Metrics(),
                         recorder=recorder)
    for i, key in enumerate(("slack:T0TEAM:C0HR:1.0", "teams:tenant:a:1chat", "web:tab000000001")):
        turn = Turn(turn_id=f"turn-{i}", text=QUESTION, user="U0SECRET", conversation_key=key)
        assert [e async for e in service.answer(turn)][-1].kind == "done"
    await service.record_feedback(Feedback(platform="web", conversation_key="web:tab000000001", user="U0SECRET",
                                           rating="down", question=QUESTION, comment="김비밀", turn_id="turn-2"))
    await recorder.flush()
    return recorder


async def dump(url: str, pattern: str) -> str:
    """Every member of every sorted set and every string under `pattern`, as one text."""
    client = Redis.from_url(url, decode_responses=True)
    parts: list[str] = []
    async for key in client.scan_iter(match=pattern):
        kind = await client.type(key)
        if kind == "zset":
            parts.extend(await client.zrange(key, 0, -1))
        elif kind == "string":
            parts.append(await client.get(key))
        parts.append(key)
    await client.aclose()
    return "\n".join(parts)


class TestRecordsOnRedis:
    async def test_no_question_text_or_raw_id_in_any_records_key(self, make_redis, records_url):
        recorder = await serve_turns(make_redis, RedisRecordStore.from_url(records_url))

        stored = await dump(records_url, "*")
        assert recorder.written == 4
        assert stored.count('"turn_id":"turn-') == 4  # three turns and the vote
        for secret in (QUESTION, "김비밀", "U0SECRET", "T0TEAM", "C0HR", "tab000000001", "답변"):
            assert secret not in stored
        await recorder.close()

    async def test_opt_in_keeps_the_question_in_the_turn_record(self, make_redis, records_url):
        recorder = await serve_turns(make_redis, RedisRecordStore.from_url(records_url), keep_questions=True)

        turns = await recorder.store.turns(0)
        assert {t.question for t in turns} == {QUESTION}
        assert {t.platform for t in turns} == {"slack", "teams", "web"}
        await recorder.close()

    async def test_report_reads_the_records_while_the_service_writes_and_purge_all_empties_them(
            self, make_redis, records_url, monkeypatch, capsys):
        recorder = await serve_turns(make_redis, RedisRecordStore.from_url(records_url))
        monkeypatch.setenv("REDIS_URL", records_url)
        monkeypatch.setenv("REGBOT_DATA_DIR", "/nonexistent/regbot-data")  # never read or created with Redis

        assert await asyncio.to_thread(regbot, ["report", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["turns"] == 3
        assert report["by_platform"] == {"slack": 1, "teams": 1, "web": 1}
        assert report["feedback"] == {"up": 0, "down": 1}
        assert report["disliked"][0]["turn_id"] == "turn-2"

        assert await asyncio.to_thread(regbot, ["report", "--purge", "--all"]) == 0
        assert "4건" in capsys.readouterr().out
        assert await recorder.store.turns(0) == []
        await recorder.close()

    async def test_report_on_an_unreachable_redis_is_one_line_and_exit_1(self, monkeypatch, capsys):
        monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")

        assert await asyncio.to_thread(regbot, ["report", "--json"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("regbot report: cannot read the turn records (ConnectionError")
        assert "Traceback" not in err
