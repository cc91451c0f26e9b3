"""The two streaming paths over HTTP: native streams, chat.update edits, and what happens when Slack pushes back."""

from __future__ import annotations

import itertools

import pytest

from adapters.slack.blocks import FEEDBACK_BLOCK_ID
from adapters.slack.status import STATUS_INTERVAL_S
from adapters.slack.streaming import MESSAGE_PART_CHARS
from rag import messages
from rag.models import Answer, AnswerEvent, Citation, Route
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import CHANNEL, StartServer
from tests.e2e.slack.sample_answers import ANSWER_TEXT, CITATION, cited_answer
from tests.unit.adapters.slack.fakes import ManualClock

MENTION = f"<@{BOT_USER_ID}> 연차는 며칠이야?"


def ticking_clock(step_s: float = 1.0):
    """A clock that moves a full flush interval on every reading, so every delta is flushed."""
    ticks = itertools.count(step=step_s)
    return lambda: float(next(ticks))


def long_answer_script(text: str):
    async def script(turn):
        for start in range(0, len(text), 500):
            yield AnswerEvent.delta(text[start : start + 500])
        yield AnswerEvent.done(Answer(text=text, route=Route.SEARCH, citations=(CITATION,)))

    return script


LONG_ANSWER = "\n\n".join(
    f"{n}. 제{n}조에 따른 휴가 규정의 세부 내용입니다. " + "가나다라마바사 " * 60 for n in range(1, 30)
)


class TestNativeStreaming:
    async def test_every_flush_appends_only_new_text(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="native", clock=ticking_clock())
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.answer_text == ANSWER_TEXT
        appended = [c.args["markdown_text"] for c in s.slack.calls_to("chat.appendStream")]
        assert len(appended) >= 3
        stop = s.slack.calls_to("chat.stopStream")[0].args
        assert stop.get("markdown_text", "") != ANSWER_TEXT
        assert any(b["block_id"] == FEEDBACK_BLOCK_ID for b in stop["blocks"])

    async def test_failed_append_is_finished_with_chat_update_from_the_kept_text(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="native", clock=ticking_clock())
        s.slack.fail("chat.appendStream", "message_not_in_streaming_state")
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.answer_text == ANSWER_TEXT
        assert "취업규칙 제20조" in final.context_text
        assert s.slack.calls[-1].method == "chat.update"
        assert len(s.slack.calls_to("chat.appendStream")) == 1  # no appends after the failure

    async def test_without_native_streaming_auto_mode_edits_a_placeholder_and_remembers(
        self, start_slack_server: StartServer, slack_api: FakeSlackApi
    ):
        slack_api.streaming = False
        s = await start_slack_server(stream_mode="auto")
        first = s.send.mention(MENTION)
        await s.send.event(first)
        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, first["ts"]))
        assert final.answer_text == ANSWER_TEXT

        second = s.send.mention(MENTION)
        await s.send.event(second)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, second["ts"]))
        assert len(s.slack.calls_to("chat.startStream")) == 1
        assert len(s.slack.bot_replies(CHANNEL, second["ts"])) == 1

    async def test_long_answer_is_split_over_several_streamed_messages(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="native", clock=ticking_clock())
        s.service.script = long_answer_script(LONG_ANSWER)
        event = s.send.mention(MENTION)

        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        replies = s.slack.bot_replies(CHANNEL, event["ts"])
        assert len(replies) >= 3
        assert all(len(r.answer_text) <= MESSAGE_PART_CHARS for r in replies)
        assert "".join(r.answer_text for r in replies) == LONG_ANSWER
        assert [bool(r.buttons(FEEDBACK_BLOCK_ID)) for r in replies] == [False] * (len(replies) - 1) + [True]


class TestStatusPacing:
    async def test_queue_position_burst_costs_one_set_status_and_shows_the_newest_position(
        self, start_slack_server: StartServer
    ):
        clock = ManualClock()
        s = await start_slack_server(stream_mode="native", clock=clock, sleep=clock.sleep)

        def set_status_calls() -> list[str]:
            return [c.args["status"] for c in s.slack.calls_to("assistant.threads.setStatus")]

        async def queued_then_answered(turn):
            for position in range(12, 0, -1):  # the queue moves faster than Slack should hear about it
                yield AnswerEvent.status(messages.STATUS_QUEUED.format(position=position))
            clock.advance(STATUS_INTERVAL_S)  # the wait for a free slot goes on
            await s.slack.wait_for(lambda: len(set_status_calls()) == 2)
            async for event in cited_answer(turn):  # its own status comes within the interval: held, then moot
                yield event

        s.service.script = queued_then_answered
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.answer_text == ANSWER_TEXT
        assert set_status_calls() == [messages.STATUS_UNDERSTANDING, messages.STATUS_QUEUED.format(position=1)]

    @pytest.mark.parametrize(
        ("stream_mode", "method"),
        [
            ("native", "assistant.threads.setStatus"),
            ("native", "chat.startStream"),
            ("update", "chat.postMessage"),  # the status placeholder
            ("update", "chat.update"),  # the first edit with answer text
        ],
    )
    async def test_rate_limited_status_or_edit_does_not_hold_the_answer_for_retry_after(
        self, start_slack_server: StartServer, stream_mode: str, method: str
    ):
        clock = ManualClock()
        s = await start_slack_server(stream_mode=stream_mode, clock=clock, sleep=clock.sleep)
        s.slack.rate_limit(method, times=1, retry_after_s=60)
        event = s.send.mention(MENTION)

        await s.send.event(event)

        # Waiting out Retry-After would take a minute; the answer comes well within the poll's deadline.
        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]), timeout_s=10)
        assert final.answer_text == ANSWER_TEXT
        assert s.slack.calls_to(method)[0].status == 429
        assert len(s.slack.bot_replies(CHANNEL, event["ts"])) == 1


class TestUpdateStreaming:
    async def test_placeholder_is_posted_then_edited_into_the_answer(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="update")
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.answer_text == ANSWER_TEXT
        assert "취업규칙 제20조" in final.context_text
        placeholder = s.slack.calls_to("chat.postMessage")[0].args
        assert placeholder["thread_ts"] == event["ts"]
        assert "질문을 이해하고 있어요" in placeholder["text"]
        assert not s.slack.calls_to("chat.startStream")
        assert len(s.slack.bot_replies(CHANNEL, event["ts"])) == 1

    async def test_rate_limited_updates_still_complete_the_answer(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="update", clock=ticking_clock())
        s.slack.rate_limit("chat.update", times=2)
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]), timeout_s=20)
        assert final.answer_text == ANSWER_TEXT
        assert [c.status for c in s.slack.calls_to("chat.update")][:2] == [429, 429]

    async def test_long_answer_is_split_into_messages_within_slack_limits(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="update")
        s.service.script = long_answer_script(LONG_ANSWER)
        event = s.send.mention(MENTION)

        await s.send.event(event)

        await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        replies = s.slack.bot_replies(CHANNEL, event["ts"])
        assert len(replies) >= 3
        assert all(len(r.text) <= MESSAGE_PART_CHARS for r in replies)
        assert "".join(r.answer_text for r in replies) == LONG_ANSWER


class TestFinalTextDiffersFromStream:
    async def test_verified_answer_replaces_what_was_streamed(self, start_slack_server: StartServer):
        s = await start_slack_server(stream_mode="native", clock=ticking_clock())
        verified = "연차는 15일입니다 [1].\n\n(일부 내용은 인용 조문에서 확인되지 않아 제외했어요.)"

        async def revised(turn):
            yield AnswerEvent.delta("연차는 15일이고 ")
            yield AnswerEvent.delta("무제한 이월됩니다.")
            yield AnswerEvent.done(Answer(text=verified, route=Route.SEARCH, citations=(CITATION,)))

        s.service.script = revised
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert final.answer_text == verified
        assert "무제한" not in final.answer_text

    async def test_sources_without_url_are_listed_as_plain_labels(self, start_slack_server: StartServer):
        s = await start_slack_server()
        cited = (
            Citation(index=1, doc="근로기준법", article="제60조", paragraph="①", title="연차 유급휴가"),
            Citation(index=2, doc="취업규칙", article="제20조", url="javascript:alert(1)"),
        )

        async def script(turn):
            yield AnswerEvent.delta("15일이에요 [1][2].")
            yield AnswerEvent.done(Answer(text="15일이에요 [1][2].", route=Route.SEARCH, citations=cited))

        s.service.script = script
        event = s.send.mention(MENTION)

        await s.send.event(event)

        final = await s.slack.wait_for(lambda: s.slack.answered(CHANNEL, event["ts"]))
        assert "[1] 근로기준법 제60조 제1항 · 연차 유급휴가" in final.context_text
        assert "[2] 취업규칙 제20조" in final.context_text
        assert "javascript" not in final.context_text
