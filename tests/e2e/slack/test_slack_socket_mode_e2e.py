"""Socket Mode: the same adapter answers events that arrive over a websocket, and acks each envelope."""

from __future__ import annotations

import json

from adapters.slack import SlackAdapter
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SlackSender
from tests.e2e.slack.sample_answers import ANSWER_TEXT, cited_answer
from tests.fakes.turn_service import FakeTurnService


async def test_event_over_socket_mode_is_acked_and_answered_in_its_thread(slack_api: FakeSlackApi):
    service = FakeTurnService(cited_answer)
    adapter = SlackAdapter(
        service, bot_token=BOT_TOKEN, signing_secret="", app_token="xapp-test", api_url=slack_api.api_url
    )
    sender = SlackSender(url="", session=None, slack=slack_api)  # type: ignore[arg-type]
    try:
        await adapter.start_socket_mode()
        await slack_api.wait_for(lambda: slack_api.socket_connected)
        event = sender.mention(f"<@{BOT_USER_ID}> 연차는 며칠이야?")

        await slack_api.socket_send(
            {
                "envelope_id": "env-1",
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": 0,
                "payload": json.loads(sender.event_body(event)),
            }
        )

        await slack_api.wait_for(lambda: any(a.get("envelope_id") == "env-1" for a in slack_api.socket_acks))
        final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]))
        assert final.answer_text == ANSWER_TEXT
        assert slack_api.calls_to("apps.connections.open")
    finally:
        await adapter.close()
