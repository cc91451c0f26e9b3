"""AnswerEvents as Server-Sent Events frames."""

from adapters.web.events import encode_event, event_payload
from rag.models import AnswerEvent, Turn
from tests.unit.adapters.web.fakes import LEAVE_CITATION, leave_answer_events, parse_sse


class TestEncodeEvent:
    def test_frame_names_the_kind_and_carries_the_event_json(self):
        frame = encode_event(AnswerEvent.status("관련 규정을 검색하고 있어요…")).decode()

        assert frame == (
            'event: status\ndata: {"kind":"status","text":"관련 규정을 검색하고 있어요…",'
            '"citations":[],"followups":[],"answer":null}\n\n'
        )

    def test_multiline_delta_stays_on_one_data_line(self):
        frames = parse_sse(encode_event(AnswerEvent.delta("첫 줄\n\n- 둘째 줄")).decode())

        assert frames == [("delta", {"kind": "delta", "text": "첫 줄\n\n- 둘째 줄", "citations": [],
                                     "followups": [], "answer": None})]

    def test_sources_carry_doc_article_and_quote(self):
        (name, data), = parse_sse(encode_event(AnswerEvent.sources((LEAVE_CITATION,))).decode())

        assert name == "sources"
        assert data["citations"][0]["doc"] == "취업규칙"
        assert data["citations"][0]["article"] == "제20조"
        assert data["citations"][0]["quote"].startswith("① 1년 동안")


class TestDonePayload:
    def test_done_keeps_the_answer_but_not_the_evidence_or_flow_log(self):
        done = leave_answer_events(Turn(turn_id="t", text="연차"))[-1]

        answer = event_payload(done)["answer"]

        assert answer["text"].startswith("**1년 근속**")
        assert answer["followups"] == ["남은 연차는 어떻게 확인해?", "연차를 반차로 나눠 쓸 수 있어?"]
        assert answer["llm_calls"] == 2
        assert "retrieved" not in answer
        assert "notes" not in answer
