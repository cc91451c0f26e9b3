"""Graceful shutdown of the real server: an answer in flight is finished and saved, new events are refused
before they are claimed (so another replica can take Slack's redelivery), readiness turns 503."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp import web

from bot.server.lifecycle import GracefulShutdown
from bot.server.runtime import Runtime
from bot.server.server import create_app
from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import MemoryHistory, StateStores
from rag.models import Answer, AnswerEvent, Citation, Message, Route, Turn
from testkit import make_settings, serve_app
from tests.e2e.fakes.slack_api import TEAM_ID
from tests.integration.slack_driver import SlackEventSender, TimedSlackApi, event_callback, mention, slack_env

CHANNEL = "C0RULES"
ANSWER = "입사 1년이 지나면 연차유급휴가 15일을 받아요."


class GatedPipeline:
    """Streams half an answer, then waits for `gate` before finishing it with a citation."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def run(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        self.started.set()
        yield AnswerEvent.delta(ANSWER[:10])
        await self.gate.wait()
        yield AnswerEvent.delta(ANSWER[10:])
        citation = Citation(index=1, doc="취업규칙", article="제20조", title="연차유급휴가")
        yield AnswerEvent.done(Answer(text=ANSWER, route=Route.SEARCH, citations=(citation,)))


class RecordingHistory(MemoryHistory):
    """In-process history that notes its writes in a shared log."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def append(self, conversation_key: str, messages: Sequence[Message]) -> None:
        self.log.append("history saved")
        await super().append(conversation_key, messages)


def recording_store(log: list[str]) -> StateStores:
    """In-process state that notes history writes and its own closing, in order."""

    async def close() -> None:
        log.append("closed")

    return dataclasses.replace(StateStores.in_process(), history=RecordingHistory(log), close_backend=close)


@dataclass
class Replica:
    url: str
    runner: web.AppRunner
    pipeline: GatedPipeline
    shutdown: GracefulShutdown


@pytest.fixture
async def slack() -> AsyncIterator[TimedSlackApi]:
    async with TimedSlackApi() as fake:
        yield fake


@pytest.fixture
async def start_replica(sample_components, slack, tmp_path) -> AsyncIterator:
    """Starts our server (create_app + GracefulShutdown) over a gated pipeline and the given state store."""
    runners: list[web.AppRunner] = []

    async def start(store: StateStores, *, drain_timeout_s: float = 20.0) -> Replica:
        settings = make_settings(tmp_path / f"replica{len(runners)}", **slack_env(slack.api_url))
        pipeline = GatedPipeline()
        metrics = Metrics()
        service = BotService(pipeline=pipeline, store=store, metrics=metrics,
                             limits=LimitsConfig(user_burst=0, workspace_burst=0))
        runtime = Runtime(settings=settings, components=sample_components, store=store, metrics=metrics,
                          service=service)
        app = create_app(runtime)
        shutdown = GracefulShutdown.for_runtime(runtime, drain_timeout_s=drain_timeout_s)
        shutdown.install(app)
        url, runner = await serve_app(app)
        runners.append(runner)
        return Replica(url, runner, pipeline, shutdown)

    yield start
    for runner in runners:
        await runner.cleanup()


async def test_answer_in_flight_at_shutdown_is_finished_then_state_is_closed(start_replica, slack):
    log: list[str] = []
    store = recording_store(log)
    replica = await start_replica(store)
    event = mention(slack, "연차는 며칠이야?", channel=CHANNEL)
    async with aiohttp.ClientSession() as http:
        assert await SlackEventSender(http).deliver(replica.url, event_callback(event)) == 200
    await asyncio.wait_for(replica.pipeline.started.wait(), timeout=10)

    stopping = asyncio.create_task(replica.runner.cleanup())  # what SIGTERM does in web.run_app
    await slack.wait_for(lambda: replica.shutdown.draining)
    assert slack.answered(CHANNEL, event["ts"]) is None
    replica.pipeline.gate.set()
    await asyncio.wait_for(stopping, timeout=20)

    final = slack.answered(CHANNEL, event["ts"])
    assert final is not None
    assert final.answer_text == ANSWER
    assert "취업규칙 제20조" in final.context_text
    assert replica.shutdown.report is not None and replica.shutdown.report.drained
    assert log == ["history saved", "closed"]
    assert [m.content for m in await store.history.load(f"slack:{TEAM_ID}:{CHANNEL}:{event['ts']}")] == [
        "연차는 며칠이야?",
        ANSWER,
    ]


async def test_event_arriving_while_draining_is_refused_unclaimed_and_answered_by_another_replica(
    start_replica, slack
):
    shared = StateStores.in_process()  # stands for the Redis both replicas share
    leaving = await start_replica(shared)
    staying = await start_replica(shared)
    staying.pipeline.gate.set()
    held = mention(slack, "연차는 며칠이야?", channel=CHANNEL)
    late = mention(slack, "병가는 며칠까지 돼?", channel=CHANNEL)
    late_body = event_callback(late)

    async with aiohttp.ClientSession() as http:
        sender = SlackEventSender(http)
        assert await sender.deliver(leaving.url, event_callback(held)) == 200
        await asyncio.wait_for(leaving.pipeline.started.wait(), timeout=10)
        draining = asyncio.create_task(leaving.shutdown.drain())
        await slack.wait_for(lambda: leaving.shutdown.draining)

        refused = await sender.deliver(leaving.url, late_body)
        async with http.get(leaving.url + "/readyz") as response:
            readiness = (response.status, await response.json())
        redelivered = await sender.deliver(staying.url, late_body)  # Slack's retry, routed to another replica

        late_answer = await slack.wait_for(lambda: slack.answered(CHANNEL, late["ts"]), timeout_s=10)
        leaving.pipeline.gate.set()
        report = await asyncio.wait_for(draining, timeout=10)

    assert refused == 503
    assert readiness == (503, {"ready": False, "checks": {"shutdown": "draining"}})
    assert redelivered == 200
    assert late_answer.answer_text == ANSWER
    assert report.drained
    assert await slack.wait_for(lambda: slack.answered(CHANNEL, held["ts"]))
