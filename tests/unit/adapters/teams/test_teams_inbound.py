"""Reading Teams activities: body checks, which messages are questions, mention stripping, feedback."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from microsoft_agents.activity import Activity

from adapters.teams.inbound import activity_problem, read_feedback, read_question
from tests.e2e.teams.activities import (
    CHANNEL,
    PERSONAL_CONVERSATION,
    TEAM,
    TENANT,
    channel_message,
    feedback_invoke,
    followup_press,
    personal_message,
)

SERVICE_URL = "https://smba.trafficmanager.net/kr/"


def activity(body: dict[str, Any]) -> Activity:
    return Activity.model_validate(body)


class TestActivityProblem:
    def test_a_teams_message_is_fine(self) -> None:
        assert activity_problem(personal_message("연차?", service_url=SERVICE_URL, activity_id="1")) is None

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            (lambda body: body.pop("type"), "type"),
            (lambda body: body.update(type=""), "type"),
            (lambda body: body.pop("conversation"), "conversation.id"),
            (lambda body: body.update(conversation={"id": ""}), "conversation"),
            (lambda body: body.update(conversation="19:abc"), "conversation"),
            (lambda body: body.pop("serviceUrl"), "serviceUrl"),
            (lambda body: body.update(serviceUrl="ftp://files"), "serviceUrl"),
        ],
    )
    def test_names_what_is_wrong(self, change: Any, reason: str) -> None:
        body = personal_message("연차?", service_url=SERVICE_URL, activity_id="1")
        change(body)

        assert reason in (activity_problem(body) or "")

    def test_non_object_bodies_are_refused(self) -> None:
        assert activity_problem([{"type": "message"}]) == "the body must be a JSON object"
        assert activity_problem("message") == "the body must be a JSON object"


class TestReadQuestion:
    def test_personal_message_is_a_question_as_written(self) -> None:
        question = read_question(activity(personal_message("연차 며칠이야?", service_url=SERVICE_URL, activity_id="7")))

        assert question is not None
        assert (question.text, question.kind, question.tenant, question.user) == (
            "연차 며칠이야?",
            "personal",
            TENANT,
            "aad-kim",
        )
        assert question.conversation_key == f"teams:{TENANT}:{PERSONAL_CONVERSATION}"

    def test_channel_mention_is_stripped_and_the_thread_kept(self) -> None:
        body = channel_message("규정 취업규칙 제20조", service_url=SERVICE_URL, activity_id="9", root_message_id="5")

        question = read_question(activity(body))

        assert question is not None
        assert (question.text, question.lookup_command) == ("취업규칙 제20조", True)
        assert question.conversation_key == f"teams:{TENANT}:{CHANNEL};messageid=5"
        assert (question.kind, question.team, question.channel) == ("channel", TEAM, CHANNEL)

    @pytest.mark.parametrize(
        ("text", "asked"),
        [
            ("규정 취업규칙", "취업규칙"),
            ("규정  여비 규정 제2조", "여비 규정 제2조"),
            ("규정에 따르면 연차는 며칠이야?", "규정에 따르면 연차는 며칠이야?"),
            ("규정", "규정"),
        ],
    )
    def test_only_the_lookup_command_word_is_removed(self, text: str, asked: str) -> None:
        question = read_question(activity(personal_message(text, service_url=SERVICE_URL, activity_id="1")))

        assert question is not None and question.text == asked

    def test_channel_message_without_a_mention_is_not_for_the_bot(self) -> None:
        body = channel_message(
            "점심 뭐 먹지?", service_url=SERVICE_URL, activity_id="9", root_message_id="9", mention=False
        )

        assert read_question(activity(body)) is None

    def test_mention_without_entity_text_is_still_stripped(self) -> None:
        # Teams drops the entity's text for names with `&`; the tag stays in the message text.
        body = channel_message("연차?", service_url=SERVICE_URL, activity_id="9", root_message_id="9")
        body["entities"][0].pop("text")
        body["recipient"] = {"id": body["recipient"]["id"], "name": "R&D Bot"}
        body["entities"][0]["mentioned"] = body["recipient"]
        body["text"] = "<at>R&amp;D Bot</at> 연차?"

        question = read_question(activity(body))

        assert question is not None and question.text == "연차?"

    def test_follow_up_button_counts_in_a_channel_without_a_mention(self) -> None:
        conversation = {"id": f"{CHANNEL};messageid=5", "conversationType": "channel", "tenantId": TENANT}
        body = followup_press("3년 차는?", service_url=SERVICE_URL, activity_id="10", conversation=conversation)
        body["value"] = '{"action": "regbot.followup", "question": "3년 차는?"}'  # as a JSON string

        question = read_question(activity(body))

        assert question is not None
        assert (question.text, question.lookup_command) == ("3년 차는?", False)

    def test_deeply_nested_button_value_is_not_a_question(self) -> None:
        conversation = {"id": f"{CHANNEL};messageid=5", "conversationType": "channel", "tenantId": TENANT}
        body = followup_press("3년 차는?", service_url=SERVICE_URL, activity_id="10", conversation=conversation)
        body["value"] = "[" * 5000  # json.loads would raise RecursionError

        assert read_question(activity(body)) is None

    def test_decomposed_hangul_and_html_entities_are_normalised(self) -> None:
        text = unicodedata.normalize("NFD", "출장비 &amp; 일비")
        question = read_question(activity(personal_message(text, service_url=SERVICE_URL, activity_id="1")))

        assert question is not None and question.text == "출장비 & 일비"

    def test_html_formatted_post_keeps_its_words(self) -> None:
        body = channel_message("연차", service_url=SERVICE_URL, activity_id="9", root_message_id="9")
        body["text"] = "<p><at>RegBot</at>&nbsp;<strong>연차</strong>는 며칠?</p><p>15 &lt; 20 이면?</p>"

        question = read_question(activity(body))

        assert question is not None and question.text == "연차는 며칠?\n15 < 20 이면?"

    def test_the_bots_own_messages_and_other_activities_are_ignored(self) -> None:
        own = personal_message("안녕", service_url=SERVICE_URL, activity_id="1")
        own["from"] = own["recipient"]
        update = personal_message("", service_url=SERVICE_URL, activity_id="2")
        update["type"] = "conversationUpdate"

        assert read_question(activity(own)) is None
        assert read_question(activity(update)) is None


class TestReadFeedback:
    def test_dislike_with_a_comment(self) -> None:
        body = feedback_invoke("dislike", service_url=SERVICE_URL, activity_id="i", reply_to_id="m-3", comment="틀려요")

        feedback = read_feedback(activity(body))

        assert feedback is not None
        assert (feedback.rating, feedback.comment, feedback.message_id, feedback.user) == (
            "down",
            "틀려요",
            "m-3",
            "aad-kim",
        )

    def test_like_without_a_comment(self) -> None:
        body = feedback_invoke("like", service_url=SERVICE_URL, activity_id="i", reply_to_id="m-3")

        feedback = read_feedback(activity(body))

        assert feedback is not None and (feedback.rating, feedback.comment) == ("up", "")

    def test_deeply_nested_feedback_text_is_kept_as_text(self) -> None:
        body = feedback_invoke("dislike", service_url=SERVICE_URL, activity_id="i", reply_to_id="m-3")
        body["value"]["actionValue"]["feedback"] = "[" * 5000

        feedback = read_feedback(activity(body))

        assert feedback is not None and feedback.comment == "[" * 5000

    def test_other_submit_actions_are_not_feedback(self) -> None:
        body = feedback_invoke("like", service_url=SERVICE_URL, activity_id="i", reply_to_id="m-3")
        body["value"]["actionName"] = "share"
        odd = feedback_invoke("love", service_url=SERVICE_URL, activity_id="i", reply_to_id="m-3")

        assert read_feedback(activity(body)) is None
        assert read_feedback(activity(odd)) is None
