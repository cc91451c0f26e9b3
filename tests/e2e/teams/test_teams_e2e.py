"""Teams end to end: activities over HTTP into our aiohttp app, replies into a fake Bot Connector.

The adapter runs in anonymous mode (no app id) except where JWT rejection is tested; every
outbound call goes to the fake on 127.0.0.1 (the `loopback_only` fixture fails the test otherwise).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from rag import messages
from rag.models import AnswerEvent, Turn
from tests.e2e.fakes.bot_connector import FakeBotConnector, ReceivedActivity, is_final
from tests.e2e.teams.activities import (
    BOT,
    CHANNEL,
    PERSONAL_CONVERSATION,
    TEAM,
    TENANT,
    channel_message,
    channel_thread_id,
    feedback_invoke,
    followup_press,
    personal_message,
)
from tests.e2e.teams.conftest import TeamsServer, running_teams_server
from tests.e2e.teams.sample_answers import LEAVE_FOLLOWUPS, leave_answer_events
from tests.fakes.turn_service import FakeTurnService


async def ask_in_personal_chat(
    server: TeamsServer, connector: FakeBotConnector, text: str, activity_id: str
) -> ReceivedActivity:
    status, body = await server.post(personal_message(text, service_url=connector.url, activity_id=activity_id))
    assert status == 202, body
    return await connector.wait_for(lambda a: is_final(a) and a.activity_id == activity_id)


class TestPersonalChat:
    async def test_question_gets_a_streamed_final_reply_citing_the_article(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        final = await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")

        assert "15일" in final.text
        assert final.citation_names == ["취업규칙 제20조"]
        assert final.ai_entity["additionalType"] == ["AIGeneratedContent"]
        assert final.ai_entity["citation"][0]["position"] == 1
        assert final.body["channelData"]["feedbackLoop"] == {"type": "default"}
        first = bot_connector.received[0]
        assert first.type == "typing"
        assert first.stream_info == {"type": "streaminfo", "streamType": "informative", "streamSequence": 1}
        assert first.text == messages.STATUS_SEARCHING
        assert final.stream_info == {"type": "streaminfo", "streamType": "final", "streamId": first.assigned_id}
        assert {a.conversation_id for a in bot_connector.received} == {PERSONAL_CONVERSATION}

    async def test_final_reply_carries_follow_up_buttons(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        final = await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")

        card = final.body["attachments"][0]
        assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
        assert card["content"]["version"] == "1.5"
        assert [a["type"] for a in final.card_actions] == ["Action.Submit", "Action.Submit"]
        assert [a["data"]["question"] for a in final.card_actions] == list(LEAVE_FOLLOWUPS)

    async def test_follow_up_in_the_same_chat_uses_the_history(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")
        second = await ask_in_personal_chat(teams_server, bot_connector, "그럼 3년 차는?", "msg-2")

        assert "앞서 물어본 '연차 며칠이야?'에 이어서" in second.text
        assert teams_service.turns[1].history[0].content == "연차 며칠이야?"
        assert teams_service.turns[1].conversation_key == f"teams:{TENANT}:{PERSONAL_CONVERSATION}"

    async def test_follow_up_button_press_is_answered_as_a_new_turn(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")
        press = followup_press(LEAVE_FOLLOWUPS[0], service_url=bot_connector.url, activity_id="msg-2")
        status, _ = await teams_server.post(press)
        assert status == 202

        second = await bot_connector.wait_for(lambda a: is_final(a) and a.activity_id == "msg-2")
        assert teams_service.turns[1].text == LEAVE_FOLLOWUPS[0]
        assert len(teams_service.turns[1].history) == 2
        assert second.citation_names == ["취업규칙 제20조"]

    async def test_request_is_acknowledged_before_the_answer_is_ready(self, bot_connector: FakeBotConnector) -> None:
        release = asyncio.Event()

        async def slow_answer(turn: Turn) -> AsyncIterator[AnswerEvent]:
            yield AnswerEvent.status(messages.STATUS_SEARCHING)
            await release.wait()  # the LLM is still thinking
            for event in leave_answer_events(turn):
                yield event

        async with running_teams_server(FakeTurnService(slow_answer)) as client:
            status, _ = await client.post(
                personal_message("연차 며칠이야?", service_url=bot_connector.url, activity_id="msg-1")
            )
            assert status == 202
            assert not any(is_final(a) for a in bot_connector.received)
            release.set()
            final = await bot_connector.wait_for(is_final)
            assert "15일" in final.text

    async def test_duplicate_delivery_is_answered_once(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        activity = personal_message("연차 며칠이야?", service_url=bot_connector.url, activity_id="msg-1")
        assert (await teams_server.post(activity))[0] == 202
        assert (await teams_server.post(activity))[0] == 202
        await bot_connector.wait_for(is_final)
        await teams_server.adapter.close()  # waits for anything still running

        assert len(teams_service.turns) == 1
        assert len([a for a in bot_connector.received if is_final(a)]) == 1


class TestInstall:
    async def test_installing_the_bot_for_a_personal_chat_posts_a_greeting(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        update = personal_message("", service_url=bot_connector.url, activity_id="upd-1")
        update.update(type="conversationUpdate", membersAdded=[BOT])
        del update["text"]

        status, _ = await teams_server.post(update)
        greeting = await bot_connector.wait_for(lambda a: a.type == "message")

        assert status == 202
        assert greeting.text == messages.CHITCHAT_GREETING
        assert greeting.path == f"/v3/conversations/{PERSONAL_CONVERSATION}/activities"  # not a reply

    async def test_adding_the_bot_to_a_team_posts_nothing(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        update = channel_message(
            "", service_url=bot_connector.url, activity_id="upd-2", root_message_id="upd-2", mention=False
        )
        update.update(type="conversationUpdate", membersAdded=[BOT])

        status, _ = await teams_server.post(update)
        await teams_server.adapter.close()

        assert status == 202
        assert bot_connector.received == []


class TestChannel:
    async def test_mention_is_answered_in_its_thread(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        post = channel_message(
            "연차 며칠이야?",
            service_url=bot_connector.url,
            activity_id="1700000000001",
            root_message_id="1700000000001",
        )
        status, _ = await teams_server.post(post)
        assert status == 202

        final = await bot_connector.wait_for(is_final)
        thread = channel_thread_id("1700000000001")
        assert {a.conversation_id for a in bot_connector.received} == {thread}
        assert "15일" in final.text
        assert final.citation_names == ["취업규칙 제20조"]
        assert [a["data"]["question"] for a in final.card_actions] == list(LEAVE_FOLLOWUPS)  # in threads too
        assert not [a for a in bot_connector.received if a.type == "typing"]  # Teams streams only 1:1
        placeholder = bot_connector.received[0]
        assert placeholder.text == messages.STATUS_SEARCHING
        assert final.is_update and final.activity_id == placeholder.assigned_id
        assert teams_service.turns[0].text == "연차 며칠이야?"  # the mention is stripped
        assert teams_service.turns[0].conversation_key == f"teams:{TENANT}:{thread}"
        scope = teams_service.scope_requests[0]
        assert (scope.platform, scope.workspace, scope.team, scope.channel, scope.is_direct) == (
            "teams",
            TENANT,
            TEAM,
            CHANNEL,
            False,
        )

    async def test_thread_reply_uses_the_thread_history_only(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        root = "1700000000001"
        first = channel_message("연차 며칠이야?", service_url=bot_connector.url, activity_id=root, root_message_id=root)
        await teams_server.post(first)
        await bot_connector.wait_for(is_final)
        other = channel_message(
            "출장비는?", service_url=bot_connector.url, activity_id="1700000000009", root_message_id="1700000000009"
        )
        reply = channel_message(
            "3년 차는?", service_url=bot_connector.url, activity_id="1700000000002", root_message_id=root
        )
        await teams_server.post(other)
        await teams_server.post(reply)
        await teams_server.adapter.close()

        by_text = {turn.text: turn for turn in teams_service.turns}
        assert by_text["3년 차는?"].history[0].content == "연차 며칠이야?"
        assert by_text["출장비는?"].history == ()

    async def test_message_without_a_mention_is_ignored(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        chatter = channel_message(
            "점심 뭐 먹지?",
            service_url=bot_connector.url,
            activity_id="1700000000005",
            root_message_id="1700000000005",
            mention=False,
        )
        status, _ = await teams_server.post(chatter)

        assert status == 202
        assert teams_server.adapter.answers_in_progress == 0
        assert teams_service.turns == []
        assert bot_connector.received == []


class TestFeedback:
    async def test_feedback_invoke_is_answered_200_and_recorded(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        final = await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")
        invoke = feedback_invoke(
            "dislike",
            service_url=bot_connector.url,
            activity_id="inv-1",
            reply_to_id=final.assigned_id,
            comment="근속 연수별 표가 있으면 좋겠어요",
        )

        status, body = await teams_server.post(invoke)

        assert (status, body) == (200, "")
        [feedback] = teams_service.feedback
        assert (feedback.platform, feedback.rating, feedback.user) == ("teams", "down", "aad-kim")
        assert feedback.question == "연차 며칠이야?"
        assert "15일" in feedback.answer
        assert feedback.citations[0].article == "제20조"
        assert feedback.comment == "근속 연수별 표가 있으면 좋겠어요"
        assert feedback.conversation_key == f"teams:{TENANT}:{PERSONAL_CONVERSATION}"


class TestFailures:
    async def test_malformed_activities_get_400_and_the_server_keeps_answering(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        no_type = personal_message("연차?", service_url=bot_connector.url, activity_id="bad-1")
        del no_type["type"]
        bad_conversation = personal_message("연차?", service_url=bot_connector.url, activity_id="bad-2")
        bad_conversation["conversation"] = "not-an-object"
        no_service_url = personal_message("연차?", service_url="", activity_id="bad-3")

        for body in (no_type, bad_conversation, no_service_url, [1, 2], "{not json"):
            status, _ = await teams_server.post(body, headers={"Content-Type": "application/json"})
            assert status == 400, body

        assert await teams_server.get("/healthz") == 200
        final = await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")
        assert "15일" in final.text
        assert [a.activity_id for a in bot_connector.received if a.type == "message"] == ["msg-1"]

    async def test_throttled_final_message_is_retried(
        self, teams_server: TeamsServer, bot_connector: FakeBotConnector
    ) -> None:
        bot_connector.fail_next(429, matches=lambda a: a.type == "message", headers={"Retry-After": "0"})

        final = await ask_in_personal_chat(teams_server, bot_connector, "연차 며칠이야?", "msg-1")

        assert [a.type for a in bot_connector.refused] == ["message"]
        assert final.citation_names == ["취업규칙 제20조"]

    async def test_too_large_final_message_is_shortened(self, bot_connector: FakeBotConnector) -> None:
        long_text = "연차휴가는 근속 연수에 따라 늘어나요[1]. " * 300

        def long_answer(turn: Turn) -> list[AnswerEvent]:
            events = leave_answer_events(turn)
            done = events[-1].answer.model_copy(update={"text": long_text})
            return [*events[:-1], AnswerEvent.done(done)]

        service = FakeTurnService(long_answer)
        bot_connector.fail_next(413, matches=lambda a: a.type == "message")
        async with running_teams_server(service) as client:
            final = await ask_in_personal_chat(client, bot_connector, "연차 며칠이야?", "msg-1")

        assert len(final.text) < len(long_text)
        assert final.text.endswith("…")
        assert final.citation_names == ["취업규칙 제20조"]

    async def test_internal_error_sends_a_short_apology_and_closes_the_stream(
        self, bot_connector: FakeBotConnector
    ) -> None:
        async def broken(turn: Turn) -> AsyncIterator[AnswerEvent]:
            yield AnswerEvent.status(messages.STATUS_SEARCHING)
            raise RuntimeError("the index vanished")

        async with running_teams_server(FakeTurnService(broken)) as client:
            await client.post(personal_message("연차?", service_url=bot_connector.url, activity_id="msg-1"))
            apology = await bot_connector.wait_for(lambda a: a.type == "message")

        assert apology.text == messages.INTERNAL_ERROR
        assert apology.stream_info["streamType"] == "final"
        assert "the index vanished" not in str(bot_connector.received)

    async def test_error_event_is_shown_to_the_user(self, bot_connector: FakeBotConnector) -> None:
        limited = messages.RATE_LIMITED.format(seconds=30)
        async with running_teams_server(FakeTurnService(lambda turn: [AnswerEvent.error(limited)])) as client:
            await client.post(personal_message("연차?", service_url=bot_connector.url, activity_id="msg-1"))
            reply = await bot_connector.wait_for(lambda a: a.type == "message")

        assert reply.text == limited
        assert reply.ai_entity is None and "channelData" not in reply.body


class TestAuthentication:
    async def test_activity_without_a_valid_token_is_rejected_when_an_app_id_is_set(
        self, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        activity = personal_message("연차 며칠이야?", service_url=bot_connector.url, activity_id="msg-1")
        async with running_teams_server(
            teams_service,
            app_id="11111111-2222-3333-4444-555555555555",
            app_password="secret",
            tenant_id="72f988bf-0000-4000-8000-00000000t001",
            allow_anonymous=True,
        ) as client:
            statuses = [
                (await client.post(activity, headers=headers))[0]
                for headers in ({}, {"Authorization": "Bearer not-a-jwt"}, {"Authorization": "Basic abc"})
            ]

        assert statuses == [401, 401, 401]
        assert teams_service.turns == []
        assert bot_connector.received == [] and bot_connector.unexpected == []

    async def test_unconfigured_teams_refuses_everything(
        self, bot_connector: FakeBotConnector, teams_service: FakeTurnService
    ) -> None:
        async with running_teams_server(teams_service, allow_anonymous=False) as client:
            status, _ = await client.post(personal_message("연차?", service_url=bot_connector.url, activity_id="msg-1"))

        assert status == 401
        assert bot_connector.received == []
