"""Slack events over real HTTP: signed requests into our server, answers through the fake Web API."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlencode

from adapters.slack.blocks import FEEDBACK_BLOCK_ID, FOLLOWUPS_BLOCK_ID
from rag import messages
from rag.models import AnswerEvent, Role
from tests.e2e.fakes.slack_api import BOT_ID, BOT_USER_ID, TEAM_ID
from tests.e2e.slack.conftest import ASKER, CHANNEL, DM_CHANNEL, SlackServer
from tests.e2e.slack.sample_answers import ANSWER_TEXT

MENTION = f"<@{BOT_USER_ID}> 연차는 며칠이야?"


class TestMentionInChannel:
    async def test_mention_gets_a_threaded_streamed_answer_citing_the_article(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(MENTION)

        status, _ = await s.send.event(event)

        assert status == 200
        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.thread_ts == event["ts"]
        assert final.answer_text == ANSWER_TEXT  # streamed once: stop did not resend the text
        assert "취업규칙 제20조" in final.context_text
        assert "https://wiki.example.com/rules/20" in final.context_text
        methods = [c.method for c in s.slack.calls if c.method != "auth.test"]
        assert methods[0] == "assistant.threads.setStatus"
        assert methods[1] == "chat.startStream"
        assert methods[-1] == "chat.stopStream"
        start = s.slack.calls_to("chat.startStream")[0].args
        assert (start["thread_ts"], start["recipient_user_id"], start["recipient_team_id"]) == (
            event["ts"],
            ASKER,
            TEAM_ID,
        )

    async def test_answer_ends_with_followup_and_feedback_buttons(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(MENTION)
        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))

        followups = final.buttons(FOLLOWUPS_BLOCK_ID)
        assert [b["action_id"] for b in followups] == ["followup_0", "followup_1"]
        assert followups[0]["value"] == "연차를 다 못 쓰면 수당이 나와?"
        assert [b["action_id"] for b in final.buttons(FEEDBACK_BLOCK_ID)] == ["feedback_up", "feedback_down"]

    async def test_the_question_reaches_the_service_without_the_mention(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(MENTION)
        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))

        turn = s.service.turns[0]
        assert turn.text == "연차는 며칠이야?"
        assert turn.conversation_key == f"slack:{TEAM_ID}:{CHANNEL}:{event['ts']}"
        assert turn.user == ASKER

    async def test_event_is_acknowledged_before_the_answer_is_written(self, slack_server: SlackServer):
        s = slack_server
        s.service.gate = asyncio.Event()  # the answer waits until the test lets it go
        event = s.send.mention(MENTION)

        status, _ = await s.send.event(event)

        assert status == 200
        assert not s.slack.calls_to("chat.startStream")
        s.service.gate.set()
        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))


class TestDuplicates:
    async def test_retried_delivery_and_the_same_mention_as_message_event_give_one_answer(
        self, slack_server: SlackServer
    ):
        s = slack_server
        event = s.send.mention(MENTION)
        await s.send.event(event, event_id="EvFIRST")
        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))

        retry_status, _ = await s.send.event(event, event_id="EvFIRST", retry_num=1)
        as_message = dict(event, type="message", channel_type="channel")
        message_status, _ = await s.send.event(as_message, event_id="EvSECOND")

        assert (retry_status, message_status) == (200, 200)
        key = f"slack:message:{CHANNEL}:{event['ts']}"
        await s.slack.wait_for(lambda: s.service.claim_attempts.count(key) == 2)
        assert len(s.service.turns) == 1
        assert len(s.slack.calls_to("chat.startStream")) == 1
        assert s.service.claim_attempts.count("slack:event:EvFIRST") == 2

    async def test_bot_messages_and_edits_are_ignored(self, slack_server: SlackServer):
        s = slack_server
        bot_event = s.send.message(f"<@{BOT_USER_ID}> 다른 봇의 질문")
        bot_event["bot_id"] = "B0OTHER"
        edit = s.send.message(f"<@{BOT_USER_ID}> 수정된 질문")
        edit["subtype"] = "message_changed"
        own = s.send.message("우리 봇의 답변", user=BOT_USER_ID)
        own["bot_id"] = BOT_ID
        for ignored in (bot_event, edit, own):
            assert (await s.send.event(ignored))[0] == 200
        event = s.send.mention(MENTION)

        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert [t.text for t in s.service.turns] == ["연차는 며칠이야?"]


class TestRequestVerification:
    async def test_bad_signature_is_rejected_without_calling_slack(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(MENTION)

        status, _ = await s.send.event(event, secret="not-the-secret")

        assert status == 401
        assert s.slack.calls == []

    async def test_request_older_than_five_minutes_is_rejected(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(MENTION)

        status, _ = await s.send.event(event, timestamp=int(time.time()) - 6 * 60)

        assert status == 401
        assert s.slack.calls == []
        assert s.service.turns == []

    async def test_url_verification_echoes_the_challenge(self, slack_server: SlackServer):
        body = json.dumps({"token": "legacy", "challenge": "3eZbrw1aBm2rZgRNFdxV2595", "type": "url_verification"})

        status, text = await slack_server.send.post(body, "application/json")

        assert status == 200
        assert json.loads(text)["challenge"] == "3eZbrw1aBm2rZgRNFdxV2595"

    async def test_ssl_check_is_answered(self, slack_server: SlackServer):
        status, _ = await slack_server.send.post(
            urlencode({"ssl_check": "1", "token": "legacy"}), "application/x-www-form-urlencoded"
        )

        assert status == 200


class TestDirectMessagesAndThreads:
    async def test_dm_gets_an_answer_in_its_thread(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.message("출장비 정산은 어떻게 해?", channel=DM_CHANNEL)

        status, _ = await s.send.event(event)

        assert status == 200
        final = await s.slack.wait_for(lambda: s.slack.answered(DM_CHANNEL, event["ts"]))
        assert "15일" in final.answer_text
        assert s.service.scope_requests[0].is_direct is True

    async def test_followup_in_the_thread_without_mention_uses_the_history(self, slack_server: SlackServer):
        s = slack_server
        first = s.send.mention(MENTION)
        await s.send.event(first)
        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, first["ts"]))

        followup = s.send.message("그럼 3년 넘게 일하면?", thread_ts=first["ts"])
        await s.send.event(followup)

        await s.slack.wait_for(lambda: len(s.service.turns) == 2 and s.slack.answered(CHANNEL, first["ts"]))
        turn = s.service.turns[1]
        assert turn.text == "그럼 3년 넘게 일하면?"
        assert [(m.role, m.content) for m in turn.history] == [
            (Role.USER, "연차는 며칠이야?"),
            (Role.ASSISTANT, ANSWER_TEXT),
        ]

    async def test_reply_in_a_thread_the_bot_is_not_in_is_ignored(self, slack_server: SlackServer):
        s = slack_server
        parent = s.slack.user_says(CHANNEL, "점심 뭐 먹지?", user=ASKER)
        chatter = s.send.message("김치찌개 어때?", thread_ts=parent.ts)
        await s.send.event(chatter)
        event = s.send.mention(MENTION)

        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert [t.text for t in s.service.turns] == ["연차는 며칠이야?"]

    async def test_mention_in_an_unknown_thread_rebuilds_history_from_slack(self, slack_server: SlackServer):
        s = slack_server
        parent = s.slack.user_says(CHANNEL, "신입도 연차가 있나요?", user=ASKER)
        s.slack.bot_says(CHANNEL, "입사 첫 해에는 한 달 개근 시 1일씩 생겨요.", thread_ts=parent.ts)
        s.slack.user_says(CHANNEL, "다른 봇 알림", user="U0BOTTY", thread_ts=parent.ts).bot_id = "B0OTHER"
        event = s.send.mention(f"<@{BOT_USER_ID}> 그럼 3년 넘게 일하면?", thread_ts=parent.ts)

        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, parent.ts))
        assert s.slack.calls_to("conversations.replies")[0].args["ts"] == parent.ts
        assert [(m.role, m.content) for m in s.service.turns[0].history] == [
            (Role.USER, "신입도 연차가 있나요?"),
            (Role.ASSISTANT, "입사 첫 해에는 한 달 개근 시 1일씩 생겨요."),
        ]


class TestUnsafeAndOddInput:
    async def test_no_message_ever_contains_a_broadcast_or_user_mention(self, slack_server: SlackServer):
        s = slack_server
        hostile = "<!channel> 모두 보세요 <!here|here> @everyone <@U0VICTIM> <!subteam^S0HR|@hr>"

        async def pinging_model(turn):
            for piece in ("<!chan", "nel> 공지: ", "<!here> ", "<!every", "one> ", "<@U0VIC", "TIM> ", turn.text):
                yield AnswerEvent.delta(piece)
            yield AnswerEvent.error(f"실패 <!everyone> {turn.text}")

        s.service.script = pinging_model
        event = s.send.mention(f"<@{BOT_USER_ID}> {hostile}")

        await s.send.event(event)

        await s.slack.wait_for(lambda: "실패" in (s.slack.last_reply(CHANNEL, event["ts"]) or _NOTHING).answer_text)
        sent = s.slack.posted_text()
        for forbidden in ("<!channel>", "<!here", "<!everyone>", "<@U0VICTIM>", "<!subteam", "@everyone"):
            assert forbidden not in sent

    async def test_empty_mention_gets_a_helpful_reply(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(f"<@{BOT_USER_ID}>  ")

        await s.send.event(event)

        reply = await s.slack.wait_for(lambda: s.slack.last_reply(CHANNEL, event["ts"]))
        assert reply.text == messages.EMPTY_QUESTION
        assert s.service.turns == []

    async def test_oversized_mention_gets_a_helpful_reply_and_the_server_stays_healthy(self, slack_server: SlackServer):
        s = slack_server
        event = s.send.mention(f"<@{BOT_USER_ID}> " + "연차 규정 질문입니다. " * 1700)
        assert len(event["text"]) > 20_000

        status, _ = await s.send.event(event)

        assert status == 200
        reply = await s.slack.wait_for(lambda: s.slack.last_reply(CHANNEL, event["ts"]))
        assert "너무 길어요" in reply.text
        assert await s.send.get("/healthz") == 200
        again = s.send.mention(MENTION)
        await s.send.event(again)
        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, again["ts"]))

    async def test_internal_error_shows_a_friendly_message(self, slack_server: SlackServer):
        s = slack_server

        async def broken(turn):
            yield AnswerEvent.delta("연차는 ")
            raise RuntimeError("index exploded: /var/lib/secret")

        s.service.script = broken
        event = s.send.mention(MENTION)

        await s.send.event(event)

        reply = await s.slack.wait_for(
            lambda: (m := s.slack.last_reply(CHANNEL, event["ts"])) and not m.streaming and m
        )
        assert messages.INTERNAL_ERROR in reply.answer_text
        assert "exploded" not in s.slack.posted_text()


class _Nothing:
    answer_text = ""


_NOTHING = _Nothing()


class TestOtherEvents:
    async def test_assistant_thread_start_is_greeted_in_the_thread(self, slack_server: SlackServer):
        s = slack_server
        event = {
            "type": "assistant_thread_started",
            "assistant_thread": {"user_id": ASKER, "channel_id": DM_CHANNEL, "thread_ts": "1760009999.000001"},
            "event_ts": "1760009999.000002",
        }

        status, _ = await s.send.event(event)

        assert status == 200
        greeting = await s.slack.wait_for(lambda: s.slack.last_reply(DM_CHANNEL, "1760009999.000001"))
        assert greeting.text == messages.CHITCHAT_GREETING

    async def test_subscribed_events_without_work_are_acknowledged(self, slack_server: SlackServer):
        s = slack_server
        home = {"type": "app_home_opened", "user": ASKER, "channel": DM_CHANNEL, "tab": "messages"}
        context = {
            "type": "assistant_thread_context_changed",
            "assistant_thread": {"user_id": ASKER, "channel_id": DM_CHANNEL, "thread_ts": "1760009999.000001"},
        }

        statuses = [(await s.send.event(event))[0] for event in (home, context)]

        assert statuses == [200, 200]
