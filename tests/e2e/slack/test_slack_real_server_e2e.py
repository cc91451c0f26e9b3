"""The real regbot server (bot.server.server over the sample regulations) answering in Slack.

Signed requests go into the running server; it talks to the fake Slack Web API on 127.0.0.1. The answers
come from the real service and pipeline (offline LLM), so assertions are on what a user would read.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import aiohttp
import pytest

from adapters.slack.blocks import FEEDBACK_BLOCK_ID, FOLLOWUPS_BLOCK_ID
from rag import messages
from tests.e2e.conftest import RunningServer
from tests.e2e.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, DM_CHANNEL, OTHER_USER, SIGNING_SECRET, SlackSender

QUESTION = f"<@{BOT_USER_ID}> 연차는 며칠이야?"


@dataclass
class RegbotInSlack:
    server: RunningServer
    slack: FakeSlackApi
    send: SlackSender
    claims: list[str]  # every key the adapter tried to claim, in order


StartRegbot = Callable[..., Awaitable[RegbotInSlack]]


@pytest.fixture
async def start_regbot_in_slack(start_regbot, slack_api: FakeSlackApi) -> AsyncIterator[StartRegbot]:
    """Starts `regbot serve`'s app with Slack configured against the fake Web API."""
    session = aiohttp.ClientSession()

    async def start(stream_mode: str = "auto") -> RegbotInSlack:
        server = await start_regbot(
            SLACK_BOT_TOKEN=BOT_TOKEN,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_URL=slack_api.api_url,
            REGBOT_SLACK_STREAM=stream_mode,
        )
        service = server.runtime.service
        claims: list[str] = []
        claim = service.claim_event

        async def recording_claim(key: str, *, ttl_s: int = 3600) -> bool:
            claims.append(key)
            return await claim(key, ttl_s=ttl_s)

        service.claim_event = recording_claim  # a spy: the real claim still decides
        return RegbotInSlack(server, slack_api, SlackSender(server.url, session, slack_api), claims)

    yield start
    await session.close()


@pytest.fixture
async def regbot(start_regbot_in_slack: StartRegbot) -> RegbotInSlack:
    return await start_regbot_in_slack()


class TestMention:
    async def test_mention_gets_a_threaded_streamed_answer_citing_the_article(self, regbot: RegbotInSlack):
        event = regbot.send.mention(QUESTION)

        status, _ = await regbot.send.event(event)

        assert status == 200
        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]))
        assert final.thread_ts == event["ts"]
        assert "15일" in final.answer_text
        assert "제20조" in final.answer_text
        assert "취업규칙 제20조" in final.context_text
        assert final.buttons(FOLLOWUPS_BLOCK_ID)
        assert [b["action_id"] for b in final.buttons(FEEDBACK_BLOCK_ID)] == ["feedback_up", "feedback_down"]
        streams = [c.method for c in regbot.slack.calls if c.method.startswith("chat.")]
        assert streams[0] == "chat.startStream" and streams[-1] == "chat.stopStream"
        # The stop did not resend the text: the answer's one quotes heading appears once.
        assert final.answer_text.count(messages.EXTRACTIVE_SUPPORT) == 1

    async def test_retry_and_message_copy_of_the_mention_give_no_second_answer(self, regbot: RegbotInSlack):
        event = regbot.send.mention(QUESTION)
        await regbot.send.event(event, event_id="EvREAL1")
        await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]))

        retry = await regbot.send.event(event, event_id="EvREAL1", retry_num=1)
        copy = await regbot.send.event(dict(event, type="message", channel_type="channel"), event_id="EvREAL2")

        assert (retry[0], copy[0]) == (200, 200)
        message_key = f"slack:message:{CHANNEL}:{event['ts']}"
        await regbot.slack.wait_for(lambda: regbot.claims.count(message_key) == 2)
        assert len(regbot.slack.calls_to("chat.startStream")) == 1
        assert len(regbot.slack.bot_replies(CHANNEL, event["ts"])) == 1

    async def test_followup_in_the_thread_uses_the_history(self, regbot: RegbotInSlack):
        first = regbot.send.mention(QUESTION)
        await regbot.send.event(first)
        await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, first["ts"]))

        followup = regbot.send.message("그럼 3년 넘게 일하면?", thread_ts=first["ts"])
        await regbot.send.event(followup)

        second = await regbot.slack.wait_for(
            lambda: (
                len(regbot.slack.bot_replies(CHANNEL, first["ts"])) == 2 and regbot.slack.answered(CHANNEL, first["ts"])
            )
        )
        # Only the thread's history ties "3년" to annual leave: 제20조 ③ (extra days after 3 years).
        assert "제20조 제3항" in second.answer_text
        assert "25일" in second.answer_text

    async def test_followup_button_answers_in_the_thread_for_the_person_who_clicked(self, regbot: RegbotInSlack):
        event = regbot.send.mention(QUESTION)
        await regbot.send.event(event)
        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]))
        button = final.buttons(FOLLOWUPS_BLOCK_ID)[0]

        status, _ = await regbot.send.click(button, user=OTHER_USER, message=final.as_slack())

        assert status == 200
        answer = await regbot.slack.wait_for(
            lambda: (
                len([r for r in regbot.slack.bot_replies(CHANNEL, event["ts"]) if not r.metadata]) == 2
                and regbot.slack.answered(CHANNEL, event["ts"])
            )
        )
        assert answer.thread_ts == event["ts"]
        asked = button["value"]  # e.g. "취업규칙 제22조(경조휴가)에 대해 알려줘"
        article = asked.split()[1].split("(")[0]
        assert article in answer.answer_text
        stream = regbot.slack.calls_to("chat.startStream")[-1].args
        assert stream["recipient_user_id"] == OTHER_USER


class TestOtherEntryPoints:
    async def test_dm_gets_an_answer(self, regbot: RegbotInSlack):
        event = regbot.send.message("출장 일비는 얼마야?", channel=DM_CHANNEL)

        await regbot.send.event(event)

        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(DM_CHANNEL, event["ts"]))
        assert "여비" in final.answer_text
        assert "여비" in final.context_text

    async def test_slash_command_looks_up_the_article_privately(self, regbot: RegbotInSlack):
        status, body = await regbot.send.command("취업규칙 제20조", hook="lookup")

        assert status == 200
        assert json.loads(body)["text"] == messages.STATUS_SEARCHING
        _, response = (await regbot.slack.wait_for(lambda: regbot.slack.responses))[0]
        assert response["response_type"] == "ephemeral"
        assert "제20조" in response["text"]
        assert "15일의 연차유급휴가" in response["text"]
        assert any(
            e["action_id"] == "share_answer"
            for b in response["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
        )


class TestSafety:
    async def test_bad_signature_and_stale_timestamp_are_rejected_without_web_api_calls(self, regbot: RegbotInSlack):
        event = regbot.send.mention(QUESTION)

        forged = await regbot.send.event(event, secret="forged")
        stale = await regbot.send.event(event, timestamp=int(time.time()) - 301)

        assert (forged[0], stale[0]) == (401, 401)
        assert regbot.slack.calls == []

    async def test_no_message_contains_a_broadcast(self, regbot: RegbotInSlack):
        event = regbot.send.mention(f"<@{BOT_USER_ID}> <!channel> 연차는 며칠이야? <!here> <!everyone> @here")

        await regbot.send.event(event)

        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]))
        assert "15일" in final.answer_text  # the broadcasts did not derail the question
        sent = regbot.slack.posted_text()
        for forbidden in ("<!channel>", "<!here>", "<!everyone>", "@here", "@channel", "@everyone"):
            assert forbidden not in sent

    async def test_empty_and_oversized_mentions_get_help_and_the_server_stays_healthy(self, regbot: RegbotInSlack):
        empty = regbot.send.mention(f"<@{BOT_USER_ID}>")
        huge = regbot.send.mention(f"<@{BOT_USER_ID}> " + "연차 " * 7000)
        assert len(huge["text"]) >= 20_000

        statuses = [(await regbot.send.event(e))[0] for e in (empty, huge)]

        assert statuses == [200, 200]
        empty_reply = await regbot.slack.wait_for(lambda: regbot.slack.last_reply(CHANNEL, empty["ts"]))
        huge_reply = await regbot.slack.wait_for(lambda: regbot.slack.last_reply(CHANNEL, huge["ts"]))
        assert empty_reply.text == messages.EMPTY_QUESTION
        assert "너무 길어요" in huge_reply.text
        assert await regbot.send.get("/healthz") == 200
        again = regbot.send.mention(QUESTION)
        await regbot.send.event(again)
        await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, again["ts"]))


class TestPushBack:
    async def test_rate_limited_updates_still_complete_the_answer(self, start_regbot_in_slack: StartRegbot):
        regbot = await start_regbot_in_slack(stream_mode="update")
        regbot.slack.rate_limit("chat.update", times=2)
        event = regbot.send.mention(QUESTION)

        await regbot.send.event(event)

        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]), timeout_s=20)
        assert "제20조" in final.answer_text
        assert [c.status for c in regbot.slack.calls_to("chat.update")][:2] == [429, 429]

    async def test_without_native_streaming_the_answer_still_arrives(self, start_regbot_in_slack: StartRegbot):
        regbot = await start_regbot_in_slack()
        regbot.slack.streaming = False
        event = regbot.send.mention(QUESTION)

        await regbot.send.event(event)

        final = await regbot.slack.wait_for(lambda: regbot.slack.answered(CHANNEL, event["ts"]))
        assert "제20조" in final.answer_text
        assert regbot.slack.calls_to("chat.update")


def test_conversation_key_names_team_channel_and_thread():
    # The bot service reads platform and workspace from the key (adapters/conversation.py).
    from adapters.conversation import ConversationKey

    key = ConversationKey.parse(f"slack:{TEAM_ID}:{CHANNEL}:1760000001.000001")
    assert (key.platform, key.workspace, key.channel) == ("slack", TEAM_ID, CHANNEL)
