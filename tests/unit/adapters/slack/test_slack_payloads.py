"""Button values: what the feedback and share buttons carry, always within Slack's 2,000 characters."""

from __future__ import annotations

from adapters.slack.payloads import FeedbackPayload, SharePayload, parse_payload
from rag.models import Citation


class TestFeedbackPayload:
    def test_value_round_trips_question_and_citations(self):
        cited = (Citation(index=1, doc="근로기준법", article="제60조", paragraph="①", quote="긴 인용문"),)
        value = FeedbackPayload.build("a1", "연차는 며칠?", cited).to_value()

        payload = parse_payload(FeedbackPayload, value)

        assert payload is not None
        assert (payload.id, payload.q) == ("a1", "연차는 며칠?")
        assert [(c.doc, c.article, c.paragraph) for c in payload.citations()] == [("근로기준법", "제60조", "①")]

    def test_value_stays_within_two_thousand_characters(self):
        cited = tuple(Citation(index=i, doc="아주 긴 규정 이름 " * 20, article=f"제{i}조") for i in range(1, 30))

        value = FeedbackPayload.build("a1", "질문 " * 1000, cited).to_value()

        assert len(value) <= 2000
        assert parse_payload(FeedbackPayload, value) is not None

    def test_a_value_that_is_not_ours_parses_to_none(self):
        assert parse_payload(FeedbackPayload, "up") is None
        assert parse_payload(SharePayload, '{"q": "no id"}') is None


class TestSharePayload:
    def test_question_is_shortened(self):
        payload = SharePayload.build("a1", "가" * 3000)

        assert len(payload.q) == 500
