"""Rebuilding a thread's conversation from conversations.replies."""

from __future__ import annotations

from adapters.slack.history import ThreadHistoryLoader, question_metadata, ts_key
from rag.models import Role
from tests.unit.adapters.slack.fakes import RecordingClient, slack_error

BOT = {"bot_user_id": "UBOT", "bot_id": "BBOT"}


def message(ts: str, text: str, **fields) -> dict:
    return {"type": "message", "ts": ts, "text": text, **fields}


async def load(replies: list[dict], *, before_ts: str = "9.0", max_messages: int = 20):
    client = RecordingClient(replies=replies)
    history = await ThreadHistoryLoader(client, max_messages=max_messages).load("C1", "1.0", before_ts=before_ts, **BOT)
    return [(m.role, m.content) for m in history], client


class TestThreadHistoryLoader:
    async def test_bot_messages_become_assistant_turns_and_mentions_are_stripped(self):
        history, client = await load(
            [
                message("1.0", "<@UBOT> 연차 며칠이야?", user="U1"),
                message("2.0", "15일이에요 &lt;개정&gt;", user="UBOT", bot_id="BBOT"),
                message("3.0", "그럼 반차는?", user="U1"),
            ]
        )

        assert history == [
            (Role.USER, "연차 며칠이야?"),
            (Role.ASSISTANT, "15일이에요 <개정>"),
            (Role.USER, "그럼 반차는?"),
        ]
        assert client.args("conversations.replies")[0]["ts"] == "1.0"

    async def test_messages_from_the_question_on_are_left_out(self):
        history, _ = await load(
            [message("1.0", "첫 질문", user="U1"), message("5.0", "지금 질문", user="U1")], before_ts="5.0"
        )

        assert history == [(Role.USER, "첫 질문")]

    async def test_other_bots_edits_and_joins_are_skipped(self):
        history, _ = await load(
            [
                message("1.0", "질문", user="U1"),
                message("2.0", "배포 알림", bot_id="BOTHER", subtype="bot_message"),
                message("3.0", "", user="U2", subtype="channel_join"),
            ]
        )

        assert history == [(Role.USER, "질문")]

    async def test_a_question_the_bot_posted_for_a_user_is_the_user_s_turn(self):
        history, _ = await load(
            [
                message("1.0", "답변", user="UBOT", bot_id="BBOT"),
                message(
                    "2.0",
                    ":speech_balloon: *반차도 돼?*",
                    user="UBOT",
                    bot_id="BBOT",
                    metadata=question_metadata("반차도 돼?", "U2"),
                ),
            ]
        )

        assert history == [(Role.ASSISTANT, "답변"), (Role.USER, "반차도 돼?")]

    async def test_an_answer_split_over_messages_is_one_turn(self):
        history, _ = await load(
            [message("1.0", "앞부분", user="UBOT", bot_id="BBOT"), message("2.0", "뒷부분", user="UBOT", bot_id="BBOT")]
        )

        assert history == [(Role.ASSISTANT, "앞부분\n\n뒷부분")]

    async def test_only_the_latest_messages_are_kept(self):
        replies = [message(f"{n}.0", f"질문 {n}", user="U1" if n % 2 else "UBOT") for n in range(1, 9)]

        history, _ = await load(replies, max_messages=3)

        assert [content for _, content in history] == ["질문 6", "질문 7", "질문 8"]

    async def test_unreadable_thread_gives_no_history(self):
        client = RecordingClient()
        client.errors["conversations.replies"] = [slack_error("missing_scope")]

        history = await ThreadHistoryLoader(client).load("C1", "1.0", before_ts="2.0", **BOT)

        assert history == ()

    def test_timestamps_sort_numerically(self):
        assert ts_key("1700000000.000100") > ts_key("1700000000.000099")
        assert ts_key("999.9") < ts_key("1000.0")
