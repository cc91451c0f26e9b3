"""The streamer and its two writers, against a recording client and a manual clock."""

from __future__ import annotations

import pytest

from adapters.slack.streaming import (
    AnswerStreamer,
    AnswerStreamerFactory,
    MessageUpdateWriter,
    NativeStreamWriter,
    StreamTarget,
    choose_split,
)
from rag import messages
from tests.polling import wait_until
from tests.unit.adapters.slack.fakes import ManualClock, RecordingClient, slack_error

TARGET = StreamTarget(channel="C1", thread_ts="1700000000.000001", team="T1", user="U1")
BUTTONS = [{"type": "actions", "block_id": "regbot_feedback", "elements": []}]


def native_streamer(client: RecordingClient, clock: ManualClock, **kwargs) -> AnswerStreamer:
    return AnswerStreamer(
        NativeStreamWriter(client, TARGET),
        fallback=lambda: MessageUpdateWriter(client, TARGET),
        clock=clock,
        sleep=clock.sleep,
        **kwargs,
    )


def update_streamer(client: RecordingClient, clock: ManualClock, **kwargs) -> AnswerStreamer:
    return AnswerStreamer(MessageUpdateWriter(client, TARGET), clock=clock, sleep=clock.sleep, **kwargs)


class TestNativeStreaming:
    async def test_text_within_the_interval_waits_for_the_next_flush(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = native_streamer(client, clock)

        await streamer.write("연차는 ")
        await streamer.write("15일")
        clock.advance(1.0)
        await streamer.write("입니다.")

        assert client.methods() == ["chat.startStream", "chat.appendStream"]
        assert client.args("chat.startStream")[0]["markdown_text"] == "연차는 "
        assert client.args("chat.appendStream")[0]["markdown_text"] == "15일입니다."

    async def test_stop_carries_only_unsent_text_and_the_blocks(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = native_streamer(client, clock)
        await streamer.write("연차는 ")
        await streamer.write("15일입니다.")

        await streamer.finish("연차는 15일입니다.", BUTTONS)

        stop = client.args("chat.stopStream")[0]
        assert stop["markdown_text"] == "15일입니다."
        assert stop["blocks"] == BUTTONS

    async def test_channel_stream_names_its_recipient(self):
        client = RecordingClient()
        await native_streamer(client, ManualClock()).finish("답", [])

        start = client.args("chat.startStream")[0]
        assert (start["thread_ts"], start["recipient_team_id"], start["recipient_user_id"]) == (
            TARGET.thread_ts,
            "T1",
            "U1",
        )

    async def test_status_uses_the_thread_status_until_text_arrives(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = native_streamer(client, clock)

        await streamer.status("검색 중")
        await streamer.write("답")
        clock.advance(5)
        await streamer.status("검증 중")

        assert client.methods() == ["assistant.threads.setStatus", "chat.startStream"]
        assert client.args("assistant.threads.setStatus")[0]["status"] == "검색 중"

    async def test_statuses_within_the_interval_show_only_the_newest_when_it_ends(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = native_streamer(client, clock)
        await streamer.status(messages.STATUS_UNDERSTANDING)
        for position in (5, 4, 3):
            await streamer.status(messages.STATUS_QUEUED.format(position=position))

        clock.advance(2.0)

        await wait_until(lambda: len(client.args("assistant.threads.setStatus")) == 2)
        shown = [a["status"] for a in client.args("assistant.threads.setStatus")]
        assert shown == [messages.STATUS_UNDERSTANDING, messages.STATUS_QUEUED.format(position=3)]

    async def test_rate_limited_status_is_dropped_and_the_answer_goes_on(self):
        client, clock = RecordingClient(), ManualClock()
        client.errors["assistant.threads.setStatus"] = [slack_error("ratelimited", status=429)]
        streamer = native_streamer(client, clock)

        await streamer.status(messages.STATUS_UNDERSTANDING)
        await streamer.write("연차는 ")
        await streamer.finish("연차는 15일입니다.", BUTTONS)

        assert client.methods() == ["assistant.threads.setStatus", "chat.startStream", "chat.stopStream"]
        assert client.args("chat.stopStream")[0]["markdown_text"] == "15일입니다."

    async def test_refused_start_falls_back_to_a_posted_message(self):
        client, clock = RecordingClient(), ManualClock()
        client.errors["chat.startStream"] = [slack_error("unknown_method")]
        streamer = native_streamer(client, clock)

        await streamer.write("연차는 15일")
        await streamer.finish("연차는 15일입니다.", BUTTONS)

        assert client.methods() == ["chat.startStream", "chat.postMessage", "chat.update"]
        final = client.args("chat.update")[0]
        assert final["text"] == "연차는 15일입니다."
        assert final["blocks"][-1] == BUTTONS[0]

    async def test_failed_append_is_repaired_with_chat_update_after_ending_the_stream(self):
        client, clock = RecordingClient(), ManualClock()
        client.errors["chat.appendStream"] = [slack_error("message_not_in_streaming_state")]
        streamer = native_streamer(client, clock)
        await streamer.write("하나 ")
        clock.advance(1)
        await streamer.write("둘 ")
        clock.advance(1)
        await streamer.write("셋")

        await streamer.finish("하나 둘 셋", BUTTONS)

        assert client.methods() == ["chat.startStream", "chat.appendStream", "chat.stopStream", "chat.update"]
        assert client.args("chat.update")[0]["text"] == "하나 둘 셋"

    async def test_rate_limited_append_is_retried_later_with_a_longer_interval(self):
        client, clock = RecordingClient(), ManualClock()
        client.errors["chat.appendStream"] = [slack_error("ratelimited", status=429)]
        streamer = native_streamer(client, clock)
        await streamer.write("하나 ")
        clock.advance(1)
        await streamer.write("둘 ")  # 429: kept for later
        clock.advance(1)
        await streamer.write("셋 ")  # within the doubled interval: not sent
        clock.advance(1)
        await streamer.write("넷")

        assert [a["markdown_text"] for a in client.args("chat.appendStream")] == ["둘 ", "둘 셋 넷"]

    async def test_changed_final_text_replaces_the_streamed_message(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = native_streamer(client, clock)
        await streamer.write("근거 없는 문장.")

        await streamer.finish("검증된 문장.", BUTTONS)

        assert client.methods() == ["chat.startStream", "chat.stopStream", "chat.update"]
        assert client.args("chat.update")[0]["text"] == "검증된 문장."


class TestUpdateStreaming:
    async def test_status_posts_a_placeholder_that_text_edits(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = update_streamer(client, clock)

        await streamer.status("질문을 이해하고 있어요…")
        await streamer.write("연차는")
        await streamer.finish("연차는 15일", BUTTONS)

        assert client.methods() == ["chat.postMessage", "chat.update", "chat.update"]
        assert client.args("chat.postMessage")[0]["thread_ts"] == TARGET.thread_ts
        assert client.args("chat.update")[-1]["text"] == "연차는 15일"

    async def test_held_back_status_never_replaces_answer_text(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = update_streamer(client, clock)
        await streamer.status(messages.STATUS_UNDERSTANDING)
        await streamer.status(messages.STATUS_SEARCHING)  # held back for the interval

        await streamer.write("연차는")
        clock.advance(5.0)
        await wait_until(lambda: clock.sleeping == 0)
        await streamer.finish("연차는 15일", BUTTONS)

        assert client.methods() == ["chat.postMessage", "chat.update", "chat.update"]
        assert messages.STATUS_SEARCHING not in str(client.calls)

    async def test_superseded_calls_skip_the_retrying_client_and_the_final_edit_uses_it(self):
        client, best_effort, clock = RecordingClient(), RecordingClient(), ManualClock()
        writer = MessageUpdateWriter(client, TARGET, best_effort_client=best_effort)
        streamer = AnswerStreamer(writer, clock=clock, sleep=clock.sleep)

        await streamer.status(messages.STATUS_UNDERSTANDING)
        await streamer.write("연차는")
        await streamer.finish("연차는 15일", BUTTONS)

        assert best_effort.methods() == ["chat.postMessage", "chat.update"]
        assert client.methods() == ["chat.update"]
        assert client.args("chat.update")[0]["text"] == "연차는 15일"

    async def test_rate_limited_final_update_is_posted_as_a_new_message(self):
        client, clock = RecordingClient(), ManualClock()
        client.errors["chat.update"] = [slack_error("ratelimited", status=429)]
        streamer = update_streamer(client, clock)
        await streamer.write("연차는")

        await streamer.finish("연차는 15일", BUTTONS)

        assert client.methods() == ["chat.postMessage", "chat.update", "chat.postMessage"]
        assert client.args("chat.postMessage")[-1]["text"] == "연차는 15일"

    async def test_long_text_moves_on_to_a_new_message_at_a_paragraph_break(self):
        client, clock = RecordingClient(), ManualClock()
        streamer = update_streamer(client, clock, part_chars=40)
        paragraphs = [
            "첫 문단은 조금 길게 이어 쓴 문장입니다.\n\n",
            "둘째 문단도 제법 길게 이어지는 내용이에요.\n\n",
            "셋째.",
        ]

        await streamer.finish("".join(paragraphs), BUTTONS)

        posted = [a["text"] for a in client.args("chat.postMessage")]
        assert posted == [paragraphs[0], paragraphs[1] + paragraphs[2]]
        assert all(len(p) <= 40 for p in posted)
        assert client.args("chat.postMessage")[-1]["blocks"][-1] == BUTTONS[0]


class TestChooseSplit:
    def test_prefers_a_paragraph_break_in_the_second_half(self):
        text = "가" * 40 + "\n\n" + "나" * 10 + "\n" + "다" * 50

        assert choose_split(text, 0, 70, min_end=0) == 42

    def test_ignores_breaks_that_would_leave_a_tiny_message(self):
        text = "가" * 10 + "\n\n" + "나" * 100

        assert choose_split(text, 0, 70, min_end=0) == 70

    def test_never_splits_before_shown_text(self):
        text = "가" * 10 + "\n" + "나" * 100

        assert choose_split(text, 0, 50, min_end=40) == 50

    def test_does_not_cut_an_escaped_entity(self):
        text = "가" * 48 + "&amp;" + "나" * 20

        assert choose_split(text, 0, 50, min_end=0) == 48


class TestFactory:
    async def test_auto_mode_remembers_that_native_streaming_was_refused(self):
        client = RecordingClient()
        client.errors["chat.startStream"] = [slack_error("not_allowed")]
        factory = AnswerStreamerFactory(client, mode="auto", clock=ManualClock())

        await factory.create(TARGET).finish("첫 답", [])
        await factory.create(TARGET).finish("둘째 답", [])

        assert client.methods().count("chat.startStream") == 1
        assert client.methods()[-1] == "chat.postMessage"

    async def test_update_mode_never_tries_native_streaming(self):
        client = RecordingClient()
        await AnswerStreamerFactory(client, mode="update").create(TARGET).finish("답", [])

        assert client.methods() == ["chat.postMessage"]

    def test_unknown_mode_is_refused(self):
        with pytest.raises(ValueError, match="auto, native or update"):
            AnswerStreamerFactory(RecordingClient(), mode="fast")  # type: ignore[arg-type]
