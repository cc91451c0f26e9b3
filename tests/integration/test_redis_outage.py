"""Redis dies mid-run: the server keeps answering on in-process state, says so on /readyz and /metrics, and
goes back to Redis when it returns; Slack's retries across the outage are answered exactly once, with one
replica and with two. Over HTTP: signed Slack events in, the fake Web API's messages out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
import redis

from bot.limits import LimitsConfig
from bot.server import build_runtime, create_app
from testkit import make_settings, serve_app
from tests.integration.slack_driver import (
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
