"""The Teams renderers: stream pace and shape, the final message, connector failures."""

from __future__ import annotations

import itertools

import pytest

from adapters.teams.delivery import ConnectorCallFailed
from adapters.teams.streaming import PersonalChatStreamer, ThreadReplyRenderer
from rag import messages
from rag.models import Answer, AnswerEvent, Citation, Route
from tests.unit.adapters.teams.fakes import FakeClock, FakeSender, ScriptedEvents

CITATION = Citation(index=1, doc="취업규칙", article="제20조", title="연차휴가", quote="15일의 유급휴가를 준다.")
ANSWER_TEXT = "연차휴가는 15일이에요[1]. 2년마다 하루씩 늘어요[1]."
FOLLOWUPS = ("남은 연차는 어떻게 확인해?",)


def answer_events(text: str = ANSWER_TEXT, *, deltas: int = 2) -> list[AnswerEvent]:
    size = -(-len(text) // deltas)
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    answer = Answer(text=text, route=Route.SEARCH, citations=(CITATION,), followups=FOLLOWUPS)
    return [
        AnswerEvent.status(messages.STATUS_SEARCHING),
        *[AnswerEvent.delta(chunk) for chunk in chunks],
        AnswerEvent.sources((CITATION,)),
        AnswerEvent.followup_questions(FOLLOWUPS),
        AnswerEvent.done(answer),
    ]


def streamer(sender: FakeSender, clock: FakeClock, **kwargs: float) -> PersonalChatStreamer:
    return PersonalChatStreamer(sender, clock=clock, **kwargs)


class TestPersonalChatStreamer:
    async def test_streams_a_status_then_cumulative_text_then_the_final_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = ScriptedEvents(answer_events(), clock=clock, step_s=1.5)

        outcome = await streamer(sender, clock).render(events.stream())

        informative, first, second = sender.of_type("typing")
        assert informative.stream_info == {"type": "streaminfo", "streamType": "informative", "streamSequence": 1}
        assert informative.text == messages.STATUS_SEARCHING
        assert first.stream_info == {
            "type": "streaminfo",
            "streamType": "streaming",
            "streamSequence": 2,
            "streamId": "id-1",
        }
        assert ANSWER_TEXT.startswith(first.text) and second.text == ANSWER_TEXT  # cumulative
        [final] = sender.of_type("message")
        assert final.stream_info == {"type": "streaminfo", "streamType": "final", "streamId": "id-1"}
        assert final.text == ANSWER_TEXT
        assert final.ai_entity["citation"][0]["appearance"]["name"] == "취업규칙 제20조"
        assert final.activity["channelData"] == {"feedbackLoop": {"type": "default"}}
        assert final.activity["attachments"][0]["content"]["actions"][0]["data"]["question"] == FOLLOWUPS[0]
        assert (outcome.delivered, outcome.message_id, outcome.answer.text) == (True, "id-2", ANSWER_TEXT)

    async def test_updates_are_at_least_the_minimum_interval_apart(self) -> None:
        clock = FakeClock()
        sender = FakeSender(clock=clock)
        events = ScriptedEvents(answer_events(deltas=8), clock=clock, step_s=0.4)

        await streamer(sender, clock, min_interval_s=1.0).render(events.stream())

        updates = sender.of_type("typing")
        assert [u.stream_info["streamSequence"] for u in updates] == list(range(1, len(updates) + 1))
        gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(updates)]
        assert len(updates) >= 3 and all(gap >= 1.0 for gap in gaps)
        assert sender.of_type("message")[0].text == ANSWER_TEXT  # buffered text arrives in the final

    async def test_stream_near_the_two_minute_limit_is_closed_and_the_answer_posted_anew(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = ScriptedEvents(answer_events(deltas=3), clock=clock, step_s=45)

        outcome = await streamer(sender, clock, stream_budget_s=100).render(events.stream())

        closing, answer = sender.of_type("message")
        assert closing.stream_info == {"type": "streaminfo", "streamType": "final", "streamId": "id-1"}
        assert ANSWER_TEXT.startswith(closing.text) and closing.text
        assert answer.stream_info is None
        assert answer.text == ANSWER_TEXT and answer.ai_entity["citation"]
        assert outcome.message_id == answer.activity_id

    async def test_user_pressing_stop_ends_the_answer_without_a_final_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        sender.fail(
            ConnectorCallFailed(403, detail="ContentStreamNotAllowed: Content stream was cancelled by user"),
            matches=lambda method, a: a["type"] == "typing" and a["entities"][0]["streamType"] == "streaming",
        )
        events = ScriptedEvents(answer_events(), clock=clock, step_s=1.5)

        outcome = await streamer(sender, clock).render(events.stream())

        assert not outcome.delivered
        assert sender.of_type("message") == []
        assert events.closed and not events.finished

    async def test_expired_stream_gets_the_answer_as_a_new_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        sender.fail(
            ConnectorCallFailed(403, detail="Content stream finished due to exceeded streaming time."),
            matches=lambda method, a: a["type"] == "message",
        )
        events = ScriptedEvents(answer_events(), clock=clock, step_s=1.5)

        outcome = await streamer(sender, clock).render(events.stream())

        [final] = sender.of_type("message")
        assert final.stream_info is None and final.text == ANSWER_TEXT
        assert outcome.delivered

    async def test_throttled_final_message_is_retried_after_the_servers_delay(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        sender.fail(ConnectorCallFailed(429, retry_after_s=3.0), matches=lambda method, a: a["type"] == "message")

        outcome = await streamer(sender, clock).render(ScriptedEvents(answer_events()).stream())

        assert clock.sleeps == [3.0]
        assert sender.of_type("message")[0].text == ANSWER_TEXT
        assert outcome.delivered

    async def test_too_large_final_message_is_shortened_until_it_fits(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        long_text = "연차휴가 규정을 설명하는 긴 답변이에요[1].\n" * 200
        sender.fail(ConnectorCallFailed(413), matches=lambda method, a: a["type"] == "message", times=2)

        await streamer(sender, clock).render(ScriptedEvents(answer_events(long_text)).stream())

        refused_lengths = [len(a["text"]) for _, a in sender.refused]
        [final] = sender.of_type("message")
        assert refused_lengths[0] > refused_lengths[1] > len(final.text)
        assert final.text.endswith("…") and final.ai_entity["citation"]

    async def test_answer_longer_than_one_message_is_split(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        text = "\n".join(f"{n}번째 문단이에요. 연차휴가는 15일이에요[1]." for n in range(1, 16))

        outcome = await streamer(sender, clock, max_text_chars=120).render(ScriptedEvents(answer_events(text)).stream())

        parts = sender.of_type("message")
        assert len(parts) > 1 and all(len(p.text) <= 120 + 20 for p in parts)
        assert parts[0].stream_info["streamType"] == "final"  # the first part closes the stream
        assert all(p.stream_info is None for p in parts[1:])
        assert [p.ai_entity.get("citation") is not None for p in parts] == [False] * (len(parts) - 1) + [True]
        assert "attachments" in parts[-1].activity and outcome.message_id == parts[-1].activity_id
        assert "".join(p.text for p in parts).replace("\n", "") == text.replace("\n", "")

    async def test_error_event_closes_the_stream_with_the_users_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = [AnswerEvent.status(messages.STATUS_SEARCHING), AnswerEvent.error(messages.INDEX_UNAVAILABLE)]

        await streamer(sender, clock).render(ScriptedEvents(events).stream())

        [final] = sender.of_type("message")
        assert final.text == messages.INDEX_UNAVAILABLE
        assert final.stream_info == {"type": "streaminfo", "streamType": "final", "streamId": "id-1"}
        assert final.ai_entity is None and "channelData" not in final.activity

    async def test_broken_event_source_ends_with_an_apology(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = ScriptedEvents(answer_events(), clock=clock, step_s=1.5, fail_at=2)

        await streamer(sender, clock).render(events.stream())

        [final] = sender.of_type("message")
        assert final.text == messages.INTERNAL_ERROR
        assert final.stream_info["streamType"] == "final"
        assert "pipeline broke" not in str(sender.calls)

    async def test_events_after_done_are_still_read(self) -> None:
        events = ScriptedEvents(answer_events())

        await streamer(FakeSender(), FakeClock()).render(events.stream())

        assert events.finished  # the service's code after `done` (saving history) ran

    async def test_refused_streaming_falls_back_to_one_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        sender.fail(
            ConnectorCallFailed(400, detail="BadArgument: streaming api is not enabled"),
            matches=lambda method, a: a["type"] == "typing",
        )

        await streamer(sender, clock).render(ScriptedEvents(answer_events(), clock=clock, step_s=1.5).stream())

        assert sender.of_type("typing") == []
        [final] = sender.of_type("message")
        assert final.stream_info is None and final.text == ANSWER_TEXT

    async def test_answer_without_any_progress_is_sent_as_one_message(self) -> None:
        sender = FakeSender()
        answer = Answer(text=messages.CHITCHAT_GREETING, route=Route.CHITCHAT)

        await streamer(sender, FakeClock()).render(ScriptedEvents([AnswerEvent.done(answer)]).stream())

        [final] = sender.calls
        assert final.type == "message" and final.stream_info is None
        assert final.text == messages.CHITCHAT_GREETING
        assert final.ai_entity is not None and "citation" not in final.ai_entity

    def test_refuses_a_pace_teams_would_throttle(self) -> None:
        with pytest.raises(ValueError, match="min_interval_s"):
            PersonalChatStreamer(FakeSender(), clock=FakeClock(), min_interval_s=0.5)


class TestThreadReplyRenderer:
    async def test_placeholder_is_edited_with_progress_and_replaced_by_the_answer(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = ScriptedEvents(answer_events(deltas=4), clock=clock, step_s=1.1)

        outcome = await ThreadReplyRenderer(sender, clock=clock).render(events.stream())

        placeholder = sender.calls[0]
        assert (placeholder.method, placeholder.text) == ("send", messages.STATUS_SEARCHING)
        edits = [c for c in sender.calls if c.method == "update"]
        assert all(e.activity_id == placeholder.activity_id for e in edits)
        assert 1 <= len(edits) - 1 <= 3  # progress edits, at most one per 2 s of events
        final = edits[-1]
        assert final.text == ANSWER_TEXT and final.ai_entity["citation"]
        assert final.activity["channelData"] == {"feedbackLoop": {"type": "default"}}
        assert final.activity["attachments"]
        assert not sender.of_type("typing")
        assert outcome.message_id == placeholder.activity_id

    async def test_without_placeholder_the_answer_is_posted_once(self) -> None:
        sender, clock = FakeSender(), FakeClock()

        await ThreadReplyRenderer(sender, clock=clock, edit_placeholder=False).render(
            ScriptedEvents(answer_events(), clock=clock, step_s=3).stream()
        )

        [only] = sender.calls
        assert only.method == "send" and only.text == ANSWER_TEXT and only.ai_entity["citation"]

    async def test_deleted_placeholder_gets_the_answer_as_a_new_message(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        sender.fail(ConnectorCallFailed(404), matches=lambda method, a: method == "update", times=10)

        outcome = await ThreadReplyRenderer(sender, clock=clock).render(
            ScriptedEvents(answer_events(), clock=clock, step_s=3).stream()
        )

        final = sender.calls[-1]
        assert final.method == "send" and final.text == ANSWER_TEXT
        assert outcome.message_id == final.activity_id

    async def test_error_replaces_the_placeholder(self) -> None:
        sender, clock = FakeSender(), FakeClock()
        events = [AnswerEvent.status(messages.STATUS_SEARCHING), AnswerEvent.error(messages.BUSY)]

        await ThreadReplyRenderer(sender, clock=clock).render(ScriptedEvents(events).stream())

        assert [(c.method, c.text) for c in sender.calls] == [
            ("send", messages.STATUS_SEARCHING),
            ("update", messages.BUSY),
        ]
