"""Follow-up, feedback and share buttons, and the `/regulation` slash command, over HTTP."""

from __future__ import annotations

import json

from adapters.slack.blocks import FEEDBACK_BLOCK_ID, FOLLOWUPS_BLOCK_ID
from rag import messages
from rag.models import Role
from tests.e2e.fakes.slack_api import BOT_USER_ID
from tests.e2e.slack.conftest import ASKER, CHANNEL, OTHER_USER, SlackServer
from tests.e2e.slack.sample_answers import ANSWER_TEXT

MENTION = f"<@{BOT_USER_ID}> 연차는 며칠이야?"


async def answered_mention(s: SlackServer):
    event = s.send.mention(MENTION)
    await s.send.event(event)
    final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
    return event, final


class TestFollowupButton:
    async def test_click_asks_the_question_in_the_same_thread_with_its_history(self, slack_server: SlackServer):
        s = slack_server
        event, final = await answered_mention(s)
        button = final.buttons(FOLLOWUPS_BLOCK_ID)[0]

        status, _ = await s.send.click(button, user=OTHER_USER, message=final.as_slack())

        assert status == 200
        await s.slack.wait_for(lambda: len(s.service.turns) == 2 and s.slack.answered(CHANNEL, event["ts"]))
        turn = s.service.turns[1]
        assert (turn.text, turn.user) == ("연차를 다 못 쓰면 수당이 나와?", OTHER_USER)
        assert turn.conversation_key == s.service.turns[0].conversation_key
        assert [m.role for m in turn.history] == [Role.USER, Role.ASSISTANT]
        question_post = next(c.args for c in s.slack.calls_to("chat.postMessage") if c.args.get("metadata"))
        assert question_post["thread_ts"] == event["ts"]
        assert "연차를 다 못 쓰면 수당이 나와?" in question_post["text"]
        stream = s.slack.calls_to("chat.startStream")[-1].args
        assert (stream["thread_ts"], stream["recipient_user_id"]) == (event["ts"], OTHER_USER)

    async def test_after_a_restart_the_history_is_read_back_from_the_thread(self, start_slack_server):
        s = await start_slack_server()
        event, final = await answered_mention(s)
        s.service.histories.clear()  # the bot's own store lost the conversation
        button = final.buttons(FOLLOWUPS_BLOCK_ID)[1]

        await s.send.click(button, message=final.as_slack())

        await s.slack.wait_for(lambda: len(s.service.turns) == 2 and s.slack.answered(CHANNEL, event["ts"]))
        assert [(m.role, m.content) for m in s.service.turns[1].history] == [
            (Role.USER, "연차는 며칠이야?"),
            (Role.ASSISTANT, ANSWER_TEXT),
        ]


class TestFeedbackButtons:
    async def test_thumbs_down_is_recorded_with_question_answer_and_sources(self, slack_server: SlackServer):
        s = slack_server
        _, final = await answered_mention(s)
        down = final.buttons(FEEDBACK_BLOCK_ID)[1]

        status, _ = await s.send.click(down, message=final.as_slack())

        assert status == 200
        await s.slack.wait_for(lambda: s.service.feedback)
        feedback = s.service.feedback[0]
        assert (feedback.rating, feedback.user, feedback.platform) == ("down", ASKER, "slack")
        assert feedback.question == "연차는 며칠이야?"
        assert feedback.answer == ANSWER_TEXT
        assert [(c.doc, c.article) for c in feedback.citations] == [("취업규칙", "제20조")]
        assert feedback.conversation_key == s.service.turns[0].conversation_key
        thanks = await s.slack.wait_for(lambda: s.slack.ephemeral)
        assert thanks[0]["text"] == messages.FEEDBACK_THANKS
        assert thanks[0]["user"] == ASKER

    async def test_feedback_on_another_replica_s_answer_uses_the_button_and_the_message(
        self, start_slack_server, slack_api
    ):
        answering = await start_slack_server()
        _, final = await answered_mention(answering)
        other_replica = await start_slack_server()
        up = final.buttons(FEEDBACK_BLOCK_ID)[0]

        await other_replica.send.click(up, message=final.as_slack())

        feedback = (await other_replica.slack.wait_for(lambda: other_replica.service.feedback))[0]
        assert feedback.rating == "up"
        assert feedback.question == "연차는 며칠이야?"
        assert feedback.answer == ANSWER_TEXT
        assert [(c.doc, c.article) for c in feedback.citations] == [("취업규칙", "제20조")]


class TestSlashCommand:
    async def test_command_is_acked_at_once_and_answered_privately_with_the_article(self, slack_server: SlackServer):
        s = slack_server

        status, body = await s.send.command("근로기준법 제60조", hook="cmd-60")

        assert status == 200
        assert json.loads(body)["text"] == messages.STATUS_SEARCHING
        hook, response = (await s.slack.wait_for(lambda: s.slack.responses))[0]
        assert hook == "cmd-60"
        assert response["response_type"] == "ephemeral"
        assert "15일" in response["text"]
        sources = [b for b in response["blocks"] if b.get("block_id") == "regbot_sources"]
        assert "취업규칙 제20조" in json.dumps(sources, ensure_ascii=False)
        actions = [e["action_id"] for b in response["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert actions == ["feedback_up", "feedback_down", "share_answer"]
        assert s.service.turns[0].text == "근로기준법 제60조"

    async def test_share_posts_the_question_in_the_channel_and_the_answer_in_its_thread(
        self, slack_server: SlackServer
    ):
        s = slack_server
        await s.send.command("연차는 며칠이야?", hook="cmd-share")
        _, response = (await s.slack.wait_for(lambda: s.slack.responses))[0]
        share = next(
            e
            for b in response["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
            if e["action_id"] == "share_answer"
        )

        status, _ = await s.send.click(share, hook="share-click")

        assert status == 200
        question = await s.slack.wait_for(
            lambda: next((c.args for c in s.slack.calls_to("chat.postMessage") if not c.args.get("thread_ts")), None)
        )
        posted_ts = next(m.ts for m in s.slack.messages.values() if m.metadata and not m.thread_ts)
        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, posted_ts))
        assert "연차는 며칠이야?" in question["text"]
        assert final.answer_text == ANSWER_TEXT
        assert len(s.service.turns) == 1  # shared as given, not asked again
        assert any(hook == "share-click" and r.get("delete_original") for hook, r in s.slack.responses)

    async def test_empty_command_gets_a_helpful_reply_at_once(self, slack_server: SlackServer):
        status, body = await slack_server.send.command("   ")

        assert status == 200
        assert json.loads(body)["text"] == messages.EMPTY_QUESTION
        assert slack_server.service.turns == []
