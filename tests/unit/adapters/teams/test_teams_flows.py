"""Teams flows on the Agents SDK's TestAdapter: the agent's turn, the proactive answer, what is sent.

The SDK's TestAdapter runs our agent (and its background continuation) in memory; replies are read
from its queue in order.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import (
    Activity,
    ChannelAccount,
    ConversationAccount,
    ConversationReference,
)
from microsoft_agents.testing import TestAdapter, TestFlow

from adapters.teams.app import AnsweredMessages, BackgroundAnswers, TeamsAgent, TeamsRenderOptions
from tests.e2e.teams.activities import BOT, TENANT, USER
from tests.e2e.teams.sample_answers import leave_answer_events
from tests.fakes.turn_service import FakeTurnService
from tests.unit.adapters.teams.fakes import FakeClock

SERVICE_URL = "https://smba.trafficmanager.net/kr/"


def teams_adapter(conversation: ConversationAccount) -> TestAdapter:
    return TestAdapter(
        conversation=ConversationReference(
            channel_id="msteams",
            service_url=SERVICE_URL,
            user=ChannelAccount(**{"id": USER["id"], "name": USER["name"], "aad_object_id": USER["aadObjectId"]}),
            agent=ChannelAccount(id=BOT["id"], name=BOT["name"]),
            conversation=conversation,
        )
    )


def make_agent(service: FakeTurnService, clock: FakeClock) -> tuple[TeamsAgent, BackgroundAnswers]:
    answers = BackgroundAnswers()
    agent = TeamsAgent(service, clock=clock, options=TeamsRenderOptions(), answers=answers, answered=AnsweredMessages())
    return agent, answers


def wire(activity: Activity) -> dict[str, Any]:
    return activity.model_dump(by_alias=True, exclude_none=True, mode="json")


def stream_type(activity: Activity) -> str | None:
    info = next((e for e in wire(activity).get("entities", []) if e["type"] == "streaminfo"), None)
    return info["streamType"] if info else None


class TestPersonalChatFlow:
    async def test_question_streams_status_text_and_a_cited_final_answer(self) -> None:
        clock = FakeClock()
        service = FakeTurnService(leave_answer_events, between_events=lambda: clock.advance(1.5))
        agent, answers = make_agent(service, clock)
        adapter = teams_adapter(ConversationAccount(id="a:1kim", conversation_type="personal", tenant_id=TENANT))

        def is_final_answer(reply: Activity) -> None:
            body = wire(reply)
            assert reply.type == "message" and stream_type(reply) == "final"
            names = [c["appearance"]["name"] for e in body["entities"] if "citation" in e for c in e["citation"]]
            assert names == ["취업규칙 제20조"]
            assert body["channelData"]["feedbackLoop"] == {"type": "default"}

        flow = (
            TestFlow(adapter, agent.on_turn)
            .send(Activity(type="message", text="연차 며칠이야?"))
            .assert_reply(lambda r: _expect(r.type == "typing" and stream_type(r) == "informative"))
            .assert_reply(lambda r: _expect(r.type == "typing" and stream_type(r) == "informative"))
            .assert_reply(lambda r: _expect(r.type == "typing" and stream_type(r) == "streaming"))
            .assert_reply(lambda r: _expect(r.type == "typing" and stream_type(r) == "streaming"))
            .assert_reply(is_final_answer)
        )
        await flow.start_test()
        await answers.close(grace_s=5)

        assert service.turns[0].text == "연차 며칠이야?"
        assert service.scope_requests[0].is_direct

    async def test_second_question_gets_the_first_exchange_as_history(self) -> None:
        clock = FakeClock()
        service = FakeTurnService(leave_answer_events)
        agent, answers = make_agent(service, clock)
        adapter = teams_adapter(ConversationAccount(id="a:1kim", conversation_type="personal", tenant_id=TENANT))

        await TestFlow(adapter, agent.on_turn).send(Activity(type="message", text="연차 며칠이야?")).start_test()
        await answers.close(grace_s=5)
        await TestFlow(adapter, agent.on_turn).send(Activity(type="message", text="3년 차는?")).start_test()
        await answers.close(grace_s=5)

        finals = [a for a in adapter.activity_queue if a.type == "message"]
        assert "앞서 물어본 '연차 며칠이야?'에 이어서" in finals[-1].text
        assert [m.content for m in service.turns[1].history][:1] == ["연차 며칠이야?"]


class TestChannelFlow:
    async def test_mention_gets_a_placeholder_then_the_answer_without_streaming(self) -> None:
        clock = FakeClock()
        service = FakeTurnService(leave_answer_events)
        agent, answers = make_agent(service, clock)
        thread = ConversationAccount(
            id="19:general@thread.tacv2;messageid=42", conversation_type="channel", is_group=True, tenant_id=TENANT
        )
        adapter = teams_adapter(thread)
        mention = Activity.model_validate(
            {
                "type": "message",
                "text": f"<at>{BOT['name']}</at> 연차 며칠이야?",
                "entities": [{"type": "mention", "mentioned": BOT, "text": f"<at>{BOT['name']}</at>"}],
            }
        )

        await TestFlow(adapter, agent.on_turn).send(mention).start_test()
        await answers.close(grace_s=5)

        # One message: the placeholder, which the TestAdapter edited in place into the final answer.
        [reply] = adapter.activity_queue
        assert reply.type == "message" and stream_type(reply) is None
        assert "15일" in reply.text
        assert [e for e in wire(reply)["entities"] if e["type"] == "https://schema.org/Message"]
        assert service.turns[0].text == "연차 며칠이야?"
        assert service.turns[0].conversation_key == f"teams:{TENANT}:19:general@thread.tacv2;messageid=42"

    async def test_channel_chatter_without_a_mention_gets_nothing(self) -> None:
        service = FakeTurnService(leave_answer_events)
        agent, answers = make_agent(service, FakeClock())
        thread = ConversationAccount(id="19:general@thread.tacv2;messageid=43", conversation_type="channel")
        adapter = teams_adapter(thread)

        await TestFlow(adapter, agent.on_turn).send(Activity(type="message", text="점심 뭐 먹지?")).start_test()
        await answers.close(grace_s=5)

        assert adapter.activity_queue == []
        assert service.turns == []


def _expect(condition: bool) -> None:
    assert condition
