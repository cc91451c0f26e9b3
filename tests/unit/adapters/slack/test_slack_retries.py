"""Before answering a Slack retry: has the bot already answered that message in its thread?"""

from __future__ import annotations

from adapters.slack.history import question_metadata
from adapters.slack.inbound import BotIdentity
from adapters.slack.retries import answered_in_thread, retry_number
from tests.unit.adapters.slack.fakes import RecordingClient, slack_error

BOT = BotIdentity(user_id="UBOT", bot_id="BBOT")


def message(ts: str, text: str, **fields) -> dict:
    return {"type": "message", "ts": ts, "text": text, **fields}


def mention(ts: str, *, thread_ts: str = "") -> dict:
    event = {"type": "app_mention", "channel": "C1", "ts": ts, "user": "U1", "text": "<@UBOT> 연차?"}
    return {**event, "thread_ts": thread_ts} if thread_ts else event


async def check(replies: list[dict], event: dict) -> tuple[bool, RecordingClient]:
    client = RecordingClient(replies=replies)
    return await answered_in_thread(client, event, BOT), client


class TestAnsweredInThread:
    async def test_a_bot_reply_after_the_mention_means_answered(self):
        answered, client = await check(
            [message("1.0", "<@UBOT> 연차?", user="U1"), message("2.0", "15일이에요", user="UBOT", bot_id="BBOT")],
            mention("1.0"),
        )
        assert answered
        assert client.args("conversations.replies")[0] == {
            "channel": "C1", "ts": "1.0", "limit": 200, "cursor": None, "include_all_metadata": True,
        }  # fmt: skip

    async def test_a_thread_without_a_bot_reply_is_unanswered(self):
        answered, _ = await check([message("1.0", "<@UBOT> 연차?", user="U1")], mention("1.0"))
        assert not answered

    async def test_a_bot_reply_to_a_later_question_does_not_count(self):
        replies = [
            message("1.0", "<@UBOT> 연차?", user="U1"),
            message("2.0", "15일이에요", user="UBOT", bot_id="BBOT"),
            message("3.0", "<@UBOT> 병가는?", user="U1", thread_ts="1.0"),
            message("4.0", "<@UBOT> 반차는?", user="U1", thread_ts="1.0"),
            message("5.0", "병가 답", user="UBOT", bot_id="BBOT", thread_ts="1.0"),
        ]
        assert (await check(replies, mention("3.0", thread_ts="1.0")))[0] is False
        assert (await check(replies, mention("4.0", thread_ts="1.0")))[0] is True

    async def test_a_question_the_bot_posted_for_a_person_is_not_an_answer(self):
        replies = [
            message("1.0", "<@UBOT> 연차?", user="U1"),
            message("2.0", "반차는?", user="UBOT", bot_id="BBOT", metadata=question_metadata("반차는?", "U1")),
        ]
        assert (await check(replies, mention("1.0")))[0] is False

    async def test_an_unreadable_thread_is_unanswered(self):
        client = RecordingClient(errors={"conversations.replies": [slack_error("channel_not_found")]})
        assert await answered_in_thread(client, mention("1.0"), BOT) is False

    async def test_events_that_are_not_messages_are_never_checked(self):
        answered, client = await check([], {"type": "assistant_thread_started", "channel": "C1", "ts": "1.0"})
        assert not answered and client.calls == []


def test_retry_number_reads_bolts_header_lists():
    assert retry_number({"x-slack-retry-num": ["2"]}) == 2
    assert retry_number({}) == 0
    assert retry_number({"x-slack-retry-num": ["x"]}) == 0
