"""Shutdown: intake stops first (Socket Mode disconnects, HTTP events get 503), answers in flight still finish."""

from __future__ import annotations

import asyncio
import json

from adapters.slack import SlackAdapter
from bot.server.lifecycle import GracefulShutdown
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SlackSender, StartServer
from tests.e2e.slack.sample_answers import ANSWER_TEXT, cited_answer
from tests.fakes.turn_service import FakeTurnService

MENTION = f"<@{BOT_USER_ID}> 연차는 며칠이야?"


async def test_drain_disconnects_socket_mode_while_the_answer_in_flight_finishes(slack_api: FakeSlackApi):
    service = FakeTurnService(cited_answer)
    service.gate = asyncio.Event()  # the answer is running when the shutdown starts
    adapter = SlackAdapter(
        service, bot_token=BOT_TOKEN, signing_secret="", app_token="xapp-test", api_url=slack_api.api_url
    )
    sender = SlackSender(url="", session=None, slack=slack_api)  # type: ignore[arg-type]
    shutdown = GracefulShutdown(
        in_flight=lambda: service.running, intake_stoppers=[adapter], drain_timeout_s=10, poll_s=0.01
    )
    try:
        await adapter.start_socket_mode()
        await slack_api.wait_for(lambda: slack_api.socket_connected)
        event = sender.mention(MENTION)
        envelope = {"envelope_id": "env-1", "type": "events_api", "payload": json.loads(sender.event_body(event))}
        await slack_api.socket_send({**envelope, "accepts_response_payload": False, "retry_attempt": 0})
        await slack_api.wait_for(lambda: service.running == 1)

        drain = asyncio.create_task(shutdown.drain())

        await slack_api.wait_for(lambda: not slack_api.socket_connected)
        assert not drain.done()  # still waiting for the answer
        service.gate.set()
        report = await drain
        await adapter.close()  # the server's own hook: lets the answer post its final message
        assert (report.drained, report.in_flight_at_start) == (True, 1)
        final = slack_api.answered(CHANNEL, event["ts"])
        assert final is not None and final.answer_text == ANSWER_TEXT
        assert len(slack_api.calls_to("apps.connections.open")) == 1  # it did not reconnect
    finally:
        await adapter.close()


async def test_http_event_after_intake_stopped_gets_503_and_is_not_claimed(start_slack_server: StartServer):
    s = await start_slack_server()
    await s.adapter.stop_intake()
    event = s.send.mention(MENTION)

    status, _ = await s.send.event(event, event_id="EvLATE")

    assert status == 503  # Slack retries it, and the retry can reach another replica
    assert s.service.claim_attempts == []
    assert s.service.turns == []
    assert s.slack.bot_replies(CHANNEL, event["ts"]) == []


async def test_answer_in_flight_keeps_the_web_api_after_intake_stopped(start_slack_server: StartServer):
    s = await start_slack_server()
    s.service.gate = asyncio.Event()
    event = s.send.mention(MENTION)
    status, _ = await s.send.event(event)
    await s.slack.wait_for(lambda: s.service.running == 1)

    await s.adapter.stop_intake()
    s.service.gate.set()

    final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
    assert status == 200
    assert final.answer_text == ANSWER_TEXT
