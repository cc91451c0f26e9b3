"""Teams against the real regbot server (bot.server.server over the bundled samples, offline LLM).

Activities go over HTTP to `/api/messages`; the answers come back to the fake Bot Connector on
127.0.0.1. These tests check what a Teams user would see from the real pipeline: the cited article,
the AI label, follow-ups, feedback, history within a conversation and the channel thread.
"""

from __future__ import annotations

import aiohttp
import pytest

from tests.e2e.conftest import RunningServer, StartServer
from tests.e2e.fakes.bot_connector import FakeBotConnector, ReceivedActivity, is_final
from tests.e2e.recorded import recorded_votes
from tests.e2e.teams.activities import (
    PERSONAL_CONVERSATION,
    TENANT,
    channel_message,
    channel_thread_id,
    feedback_invoke,
    followup_press,
    personal_message,
)


class RegbotTeams:
    """Posts activities to the real server and waits for the replies at the fake connector."""

    def __init__(self, server: RunningServer, connector: FakeBotConnector, session: aiohttp.ClientSession) -> None:
        self.server = server
        self.connector = connector
        self.session = session

    async def post(self, body: object, *, headers: dict[str, str] | None = None) -> tuple[int, str]:
        kwargs = {"data": body} if isinstance(body, str) else {"json": body}
        async with self.session.post(self.server.url + "/api/messages", headers=headers or {}, **kwargs) as resp:
            return resp.status, await resp.text()

    async def ask(self, text: str, activity_id: str) -> ReceivedActivity:
        status, _ = await self.post(personal_message(text, service_url=self.connector.url, activity_id=activity_id))
        assert status == 202
        return await self.connector.wait_for(lambda a: is_final(a) and a.activity_id == activity_id, timeout_s=30)


@pytest.fixture
async def regbot_teams(start_regbot: StartServer, bot_connector: FakeBotConnector):
    server = await start_regbot(TEAMS_ALLOW_ANONYMOUS="true")
    async with aiohttp.ClientSession() as session:
        yield RegbotTeams(server, bot_connector, session)


class TestRealServerPersonalChat:
    async def test_question_is_answered_citing_the_article_with_the_citation_entity(
        self, regbot_teams: RegbotTeams
    ) -> None:
        final = await regbot_teams.ask("연차휴가는 며칠이야?", "msg-1")

        assert "15일" in final.text
        assert any(name.startswith("취업규칙 제20조") for name in final.citation_names)
        assert final.ai_entity["additionalType"] == ["AIGeneratedContent"]
        assert all(len(c["appearance"]["abstract"]) <= 160 for c in final.ai_entity["citation"])
        assert final.stream_info["streamType"] == "final"
        assert final.body["channelData"]["feedbackLoop"] == {"type": "default"}
        assert final.card_actions and all(a["type"] == "Action.Submit" for a in final.card_actions)

    async def test_follow_up_in_the_same_chat_uses_the_history(self, regbot_teams: RegbotTeams) -> None:
        await regbot_teams.ask("연차휴가는 며칠이야?", "msg-1")
        # On its own "반차도 돼?" finds nothing; with the first exchange it is about annual leave.
        second = await regbot_teams.ask("반차도 돼?", "msg-2")

        assert "취업규칙 제20조 제4항" in second.citation_names  # leave in half-day units
        assert "반일" in second.text
        stored = await regbot_teams.server.runtime.store.history.load(f"teams:{TENANT}:{PERSONAL_CONVERSATION}")
        assert [m.content for m in stored][0::2] == ["연차휴가는 며칠이야?", "반차도 돼?"]
        elsewhere = personal_message("반차도 돼?", service_url=regbot_teams.connector.url, activity_id="msg-3")
        elsewhere["conversation"] = dict(elsewhere["conversation"], id="a:1another-chat")
        await regbot_teams.post(elsewhere)
        await regbot_teams.connector.wait_for(lambda a: a.type == "message" and a.activity_id == "msg-3")
        # The other chat's turn stands alone: its history holds only its own question, never this chat's.
        other = await regbot_teams.server.runtime.store.history.load(f"teams:{TENANT}:a:1another-chat")
        assert [m.content for m in other][0::2] == ["반차도 돼?"]

    async def test_follow_up_button_is_answered_as_a_new_turn(self, regbot_teams: RegbotTeams) -> None:
        first = await regbot_teams.ask("연차휴가는 며칠이야?", "msg-1")
        question = first.card_actions[0]["data"]["question"]

        press = followup_press(question, service_url=regbot_teams.connector.url, activity_id="msg-2")
        assert (await regbot_teams.post(press))[0] == 202
        second = await regbot_teams.connector.wait_for(lambda a: is_final(a) and a.activity_id == "msg-2")

        assert second.citation_names
        stored = await regbot_teams.server.runtime.store.history.load(f"teams:{TENANT}:{PERSONAL_CONVERSATION}")
        assert stored[2].content == question

    async def test_lookup_command_shows_the_article(self, regbot_teams: RegbotTeams) -> None:
        final = await regbot_teams.ask("규정 취업규칙 제20조", "msg-1")

        assert "취업규칙 제20조(연차유급휴가)" in final.text
        assert final.citation_names[0].startswith("취업규칙 제20조")

    async def test_the_lookup_command_never_turns_into_a_search(self, regbot_teams: RegbotTeams) -> None:
        # "연차 규정" is no regulation's name: the command says so instead of answering a search for 연차.
        final = await regbot_teams.ask("규정 연차 규정 제20조", "msg-1")

        assert "「연차 규정」" in final.text and "등록된 규정에 없어요" in final.text
        assert not final.citation_names

    async def test_feedback_invoke_is_answered_and_recorded(self, regbot_teams: RegbotTeams) -> None:
        final = await regbot_teams.ask("연차휴가는 며칠이야?", "msg-1")
        invoke = feedback_invoke(
            "like", service_url=regbot_teams.connector.url, activity_id="inv-1", reply_to_id=final.assigned_id
        )

        assert await regbot_teams.post(invoke) == (200, "")

        turns, [vote] = await recorded_votes(regbot_teams.server)
        assert (vote.platform, vote.rating, vote.comment) == ("teams", "up", "")
        assert all((t.question, t.answer) == ("", "") for t in turns.values())  # REGBOT_KEEP_QUESTIONS is off


class TestRealServerChannel:
    async def test_mention_is_answered_in_the_thread(self, regbot_teams: RegbotTeams) -> None:
        root = "1700000000001"
        post = channel_message(
            "연차휴가는 며칠이야?", service_url=regbot_teams.connector.url, activity_id=root, root_message_id=root
        )

        assert (await regbot_teams.post(post))[0] == 202
        final = await regbot_teams.connector.wait_for(is_final, timeout_s=30)

        assert final.conversation_id == channel_thread_id(root)
        assert final.is_update  # the placeholder, edited into the answer
        assert any(name.startswith("취업규칙 제20조") for name in final.citation_names)
        assert final.card_actions
        assert not [a for a in regbot_teams.connector.received if a.type == "typing"]


class TestRealServerFailures:
    async def test_malformed_activity_gets_400_and_the_server_stays_healthy(self, regbot_teams: RegbotTeams) -> None:
        no_type = personal_message("연차?", service_url=regbot_teams.connector.url, activity_id="bad-1")
        del no_type["type"]

        assert (await regbot_teams.post(no_type))[0] == 400
        assert (await regbot_teams.post("{not json"))[0] == 415  # anonymous mode takes JSON only
        async with regbot_teams.session.get(regbot_teams.server.url + "/healthz") as response:
            assert response.status == 200
        final = await regbot_teams.ask("연차휴가는 며칠이야?", "msg-1")
        assert "15일" in final.text

    async def test_unauthenticated_activity_is_rejected_when_an_app_id_is_set(
        self, start_regbot: StartServer, bot_connector: FakeBotConnector
    ) -> None:
        server = await start_regbot(
            MICROSOFT_APP_ID="11111111-2222-3333-4444-555555555555",
            MICROSOFT_APP_PASSWORD="secret",
            MICROSOFT_APP_TENANT_ID="72f988bf-0000-4000-8000-000000000001",
            TEAMS_ALLOW_ANONYMOUS="true",
        )
        activity = personal_message("연차휴가는 며칠이야?", service_url=bot_connector.url, activity_id="msg-1")
        async with aiohttp.ClientSession() as session:
            teams = RegbotTeams(server, bot_connector, session)
            statuses = [
                (await teams.post(activity, headers=headers))[0]
                for headers in ({}, {"Authorization": "Bearer not-a-jwt"})
            ]

        assert statuses == [401, 401]
        assert bot_connector.received == [] and bot_connector.unexpected == []


class TestVietnameseQuestion:
    async def test_the_card_under_a_vietnamese_answer_is_in_vietnamese(self, regbot_teams: RegbotTeams) -> None:
        final = await regbot_teams.ask("Làm việc đủ một năm thì tôi được bao nhiêu ngày nghỉ phép năm?", "msg-1")

        assert final.text.startswith("Đây là nội dung quy định của Hàn Quốc")
        assert any(name.startswith("취업규칙 제20조") for name in final.citation_names)
        (card,) = [a["content"] for a in final.body["attachments"]]
        assert card["body"][0]["text"] == "Hỏi tiếp"
        assert all(not a["title"].endswith("에 대해 알려줘") for a in final.card_actions)
