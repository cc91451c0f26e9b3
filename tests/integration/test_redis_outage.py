"""Redis dies mid-run: the server keeps answering on in-process state, says so on /readyz and /metrics, and
goes back to Redis when it returns. Over HTTP: signed Slack events in, the fake Web API's messages out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import redis

from bot.limits import LimitsConfig
from bot.server import build_runtime, create_app
from testkit import make_settings, serve_app
from tests.integration.slack_driver import SlackEventSender, TimedSlackApi, event_callback, mention, slack_env

CHANNEL = "C0RULES"


@pytest.fixture
async def server_on_redis(sample_components, redis_server, tmp_path) -> AsyncIterator[tuple[str, TimedSlackApi]]:
    async with TimedSlackApi() as slack:
        settings = make_settings(tmp_path / "server", REDIS_URL=redis_server.url, **slack_env(slack.api_url))
        runtime = build_runtime(settings, sample_components, limits=LimitsConfig(user_burst=0, workspace_burst=0))
        url, runner = await serve_app(create_app(runtime))
        try:
            yield url, slack
        finally:
            await runner.cleanup()
            if not _answers_ping(redis_server.port):  # the test failed while Redis was down
                redis_server.start()


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


async def ask(sender: SlackEventSender, url: str, slack: TimedSlackApi, question: str) -> tuple[str, str]:
    """Mention the bot; returns (event_id, thread ts) once the thread holds the final answer."""
    event = mention(slack, question, channel=CHANNEL)
    body = event_callback(event)
    assert await sender.deliver(url, body) == 200
    final = await slack.wait_for(lambda: slack.answered(CHANNEL, event["ts"]), timeout_s=20)
    assert "취업규칙" in final.context_text, final.context_text
    event_id = body.split('"event_id": "', 1)[1].split('"', 1)[0]
    return event_id, event["ts"]


async def test_bot_answers_through_a_redis_outage_and_returns_to_redis(server_on_redis, redis_server):
    url, slack = server_on_redis
    keys = redis.Redis(host="127.0.0.1", port=redis_server.port, decode_responses=True)
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        before_id, _ = await ask(sender, url, slack, "연차는 며칠이야?")
        assert await readiness(http, url) == (200, "ok", "ok")
        assert keys.exists(f"regbot:claim:slack:event:{before_id}")

        redis_server.stop()
        await ask(sender, url, slack, "경조휴가는 며칠이야?")
        assert await readiness(http, url) == (200, "down", "degraded")  # still answering: 200, Redis named
        assert await degraded_gauge(http, url) == "1.0"

        redis_server.start()
        assert await readiness(http, url) == (200, "ok", "ok")  # readiness probes Redis and switches back
        after_id, after_ts = await ask(sender, url, slack, "병가는 며칠까지 쓸 수 있어?")
        assert await degraded_gauge(http, url) == "0.0"

    # The turn after recovery used Redis again: its dedupe claim and its history are there.
    assert keys.exists(f"regbot:claim:slack:event:{after_id}")
    history = keys.lrange(f"regbot:history:slack:T0REGBOT:{CHANNEL}:{after_ts}", 0, -1)
    assert len(history) == 2
    keys.close()
