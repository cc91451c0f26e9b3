"""Redis dies mid-run: the server keeps answering on in-process state, says so on /readyz and /metrics, and
goes back to Redis when it returns; Slack's retries across the outage are answered exactly once, with one
replica and with two. Over HTTP: signed Slack events in, the fake Web API's messages out."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
import redis

from bot.server.server import build_runtime, create_app
from bot.service.limits import LimitsConfig
from rag.models import AnswerEventKind
from testkit import make_settings, serve_app
from tests.e2e.fakes.slack_api import BOT_USER_ID
from tests.integration.slack_driver import (
    ASKER,
    SlackEventSender,
    TimedSlackApi,
    as_channel_message,
    event_callback,
    mention,
    slack_env,
)

CHANNEL = "C0RULES"


@pytest.fixture
async def servers_on_redis(sample_components, redis_server, tmp_path) -> AsyncIterator[tuple[list[str], TimedSlackApi]]:
    """Two replicas of our server (each its own Redis client and in-process fallback) behind one Slack app."""
    async with TimedSlackApi() as slack:
        urls: list[str] = []
        runners = []
        try:
            for number in range(2):
                settings = make_settings(tmp_path / f"server{number}", REDIS_URL=redis_server.url,
                                         **slack_env(slack.api_url))
                runtime = build_runtime(settings, sample_components,
                                        limits=LimitsConfig(user_burst=0, channel_burst=0, workspace_burst=0))
                url, runner = await serve_app(create_app(runtime))
                urls.append(url)
                runners.append(runner)
            yield urls, slack
        finally:
            for runner in runners:
                await runner.cleanup()
            if not _answers_ping(redis_server.port):  # the test failed while Redis was down
                redis_server.start()


@pytest.fixture
async def server_on_redis(servers_on_redis) -> tuple[str, TimedSlackApi]:
    urls, slack = servers_on_redis
    return urls[0], slack


def _answers_ping(port: int) -> bool:
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.2)
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False
    finally:
        client.close()


async def readiness(http: aiohttp.ClientSession, url: str) -> tuple[int, str, str]:
    """The /readyz status code, the state it names for Redis, and the overall status."""
    async with http.get(url + "/readyz") as response:
        body = await response.json()
        return response.status, body["checks"]["redis"], body["status"]


async def degraded_gauge(http: aiohttp.ClientSession, url: str) -> str:
    async with http.get(url + "/metrics") as response:
        lines = (await response.text()).splitlines()
    return next(line.split()[-1] for line in lines if line.startswith("regbot_state_degraded "))


@dataclass
class Asked:
    event: dict
    body: str  # the delivery Slack would retry

    @property
    def event_id(self) -> str:
        return json.loads(self.body)["event_id"]

    @property
    def ts(self) -> str:
        return self.event["ts"]


async def ask(sender: SlackEventSender, url: str, slack: TimedSlackApi, question: str) -> Asked:
    """Mention the bot; returns the delivery once the thread holds the final answer."""
    event = mention(slack, question, channel=CHANNEL)
    body = event_callback(event)
    assert await sender.deliver(url, body) == 200
    final = await slack.wait_for(lambda: slack.answered(CHANNEL, event["ts"]), timeout_s=20)
    assert "취업규칙" in final.context_text, final.context_text
    return Asked(event, body)


async def answers_of(sender: SlackEventSender, url: str, slack: TimedSlackApi, asked: list[Asked]) -> list[int]:
    """How many answers each question got, once a fresh question asked last has its answer: any duplicate
    started by an earlier delivery has begun by then."""
    await ask(sender, url, slack, "육아휴직은 언제 신청해?")
    return [slack.answers_started(CHANNEL, a.ts) for a in asked]


async def test_bot_answers_through_a_redis_outage_and_returns_to_redis(server_on_redis, redis_server):
    url, slack = server_on_redis
    keys = redis.Redis(host="127.0.0.1", port=redis_server.port, decode_responses=True)
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        before_id = (await ask(sender, url, slack, "연차는 며칠이야?")).event_id
        assert await readiness(http, url) == (200, "ok", "ok")
        assert keys.exists(f"regbot:claim:slack:event:{before_id}")

        redis_server.stop()
        await ask(sender, url, slack, "경조휴가는 며칠이야?")
        assert await readiness(http, url) == (200, "down", "degraded")  # still answering: 200, Redis named
        assert await degraded_gauge(http, url) == "1.0"

        redis_server.start()
        assert await readiness(http, url) == (200, "ok", "ok")  # readiness probes Redis and switches back
        after = await ask(sender, url, slack, "병가는 며칠까지 쓸 수 있어?")
        after_id, after_ts = after.event_id, after.ts
        assert await degraded_gauge(http, url) == "0.0"

    # The turn after recovery used Redis again: its dedupe claim and its history are there.
    assert keys.exists(f"regbot:claim:slack:event:{after_id}")
    history = keys.lrange(f"regbot:history:slack:T0REGBOT:{CHANNEL}:{after_ts}", 0, -1)
    assert len(history) == 2
    keys.close()


async def test_retries_across_a_redis_kill_and_restart_are_answered_once(server_on_redis, redis_server):
    url, slack = server_on_redis
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        before = await ask(sender, url, slack, "연차는 며칠이야?")
        redis_server.stop()
        during = await ask(sender, url, slack, "경조휴가는 며칠이야?")
        assert await sender.deliver(url, before.body, retry_num=1) == 200  # its claim is in the dead Redis
        redis_server.start()  # empty: nothing was persisted
        assert await readiness(http, url) == (200, "ok", "ok")
        assert await sender.deliver(url, during.body, retry_num=1) == 200  # claimed in process, written through
        assert await sender.deliver(url, before.body, retry_num=2) == 200
        assert await answers_of(sender, url, slack, [before, during]) == [1, 1]


async def test_two_replicas_answer_each_event_once_across_a_redis_outage(servers_on_redis, redis_server):
    (first, second), slack = servers_on_redis
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        before = await ask(sender, first, slack, "연차는 며칠이야?")
        redis_server.stop()
        during = await ask(sender, first, slack, "경조휴가는 며칠이야?")
        # Retries handed to the other replica, which cannot see the first one's claims: it reads the thread.
        assert await sender.deliver(second, before.body, retry_num=1) == 200
        assert await sender.deliver(second, during.body, retry_num=1) == 200
        redis_server.start()
        assert await readiness(http, first) == (200, "ok", "ok")  # the first replica writes its claims through
        assert await readiness(http, second) == (200, "ok", "ok")
        # The `message` twin of the mention answered during the outage: no retry header, only Redis can tell.
        assert await sender.deliver(second, event_callback(as_channel_message(during.event))) == 200
        assert await sender.deliver(second, before.body, retry_num=2) == 200
        assert await answers_of(sender, second, slack, [before, during]) == [1, 1]


# --- mid-turn: Redis dies while the conversation's lock is held and the answer is streaming ---------------------


class HeldPipeline:
    """The real pipeline, held after its first streamed words until the test lets it go on: a turn caught
    mid-answer, holding its conversation's lock."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.streaming = asyncio.Event()
        self.go_on = asyncio.Event()

    async def run(self, turn):
        async for event in self.inner.run(turn):
            yield event
            if event.kind == AnswerEventKind.DELTA and not self.streaming.is_set():
                self.streaming.set()
                await self.go_on.wait()


@pytest.fixture
async def held_server(sample_components, redis_server, tmp_path):
    held = HeldPipeline(sample_components.pipeline)
    async with TimedSlackApi() as slack:
        settings = make_settings(tmp_path / "held", REDIS_URL=redis_server.url, **slack_env(slack.api_url))
        runtime = build_runtime(settings, dataclasses.replace(sample_components, pipeline=held),
                                limits=LimitsConfig(user_burst=0, channel_burst=0, workspace_burst=0))
        url, runner = await serve_app(create_app(runtime))
        try:
            yield url, slack, held
        finally:
            held.go_on.set()
            await runner.cleanup()
            if not _answers_ping(redis_server.port):
                redis_server.start()


def thread_mention(slack: TimedSlackApi, question: str, thread_ts: str) -> dict:
    text = f"<@{BOT_USER_ID}> {question}"
    message = slack.user_says(CHANNEL, text, user=ASKER, thread_ts=thread_ts)
    return {"type": "app_mention", "user": ASKER, "text": text, "ts": message.ts, "channel": CHANNEL,
            "event_ts": message.ts, "thread_ts": thread_ts}


async def test_redis_killed_mid_answer_under_the_lock_gives_one_answer_and_frees_the_thread(held_server, redis_server):
    url, slack, held = held_server
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        event = mention(slack, "연차는 며칠이야?", channel=CHANNEL)
        body = event_callback(event)
        assert await sender.deliver(url, body) == 200
        async with asyncio.timeout(20):
            await held.streaming.wait()  # the lock is held and the first words are out

        redis_server.stop()
        assert await sender.deliver(url, body, retry_num=1) == 200  # Slack retries while the turn is stuck
        held.go_on.set()
        final = await slack.wait_for(lambda: slack.answered(CHANNEL, event["ts"]), timeout_s=20)
        assert "15일" in final.answer_text

        # The same thread goes on during the outage: the lock the dead Redis held does not block it.
        follow_up = thread_mention(slack, "반차로도 쓸 수 있어?", event["ts"])
        assert await sender.deliver(url, event_callback(follow_up)) == 200
        await slack.wait_for(lambda: slack.answers_started(CHANNEL, event["ts"]) >= 2, timeout_s=20)
        redis_server.start()
        assert await answers_of(sender, url, slack, [Asked(event, body)]) == [2]  # the answer and the follow-up's
        assert await sender.deliver(url, body, retry_num=2) == 200
        assert await answers_of(sender, url, slack, [Asked(event, body)]) == [2]  # nothing answered twice
