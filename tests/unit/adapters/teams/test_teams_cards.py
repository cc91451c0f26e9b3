"""Pure Teams wire builders: citation entity limits, AI label, follow-up card, message shapes."""

from __future__ import annotations

import json

from adapters.teams import cards, labels
from rag.models import Citation


def make_citation(index: int = 1, **fields: str) -> Citation:
    values = {"doc": "취업규칙", "article": f"제{index}조", "title": "연차휴가", "quote": "유급휴가를 준다."}
    values.update(fields)
    return Citation(index=index, **values)


class TestCitationClaims:
    def test_title_and_abstract_are_cut_to_teams_limits(self) -> None:
        citation = make_citation(doc="아주 긴 이름의 사내 규정 " * 10, quote="조문 내용이 길어요. " * 40)

        appearance = cards.citation_claim(citation)["appearance"]

        assert cards.MAX_CITATION_TITLE_CHARS - 2 <= len(appearance["name"]) <= cards.MAX_CITATION_TITLE_CHARS
        assert cards.MAX_CITATION_ABSTRACT_CHARS - 2 <= len(appearance["abstract"]) <= cards.MAX_CITATION_ABSTRACT_CHARS
        assert appearance["name"].endswith("…") and appearance["abstract"].endswith("…")

    def test_claim_names_the_article_and_links_only_web_urls(self) -> None:
        web = cards.citation_claim(make_citation(20, url="https://intranet.example.com/rules#20"))
        local = cards.citation_claim(make_citation(21, url="/srv/rules/work.md"))

        assert web == {
            "@type": "Claim",
            "position": 20,
            "appearance": {
                "@type": "DigitalDocument",
                "name": "취업규칙 제20조",
                "abstract": "유급휴가를 준다.",
                "url": "https://intranet.example.com/rules#20",
                "keywords": ["연차휴가"],
            },
        }
        assert "url" not in local["appearance"]

    def test_at_most_twenty_citations_preferring_the_ones_the_text_marks(self) -> None:
        citations = [make_citation(n) for n in range(1, 26)]
        text = "답변이에요[3][24]."

        selected = cards.select_citations(citations, text)

        positions = [c.index for c in selected]
        assert len(positions) == cards.MAX_CITATIONS
        assert 3 in positions and 24 in positions
        assert positions == sorted(positions)

    def test_duplicate_markers_keep_the_first_citation(self) -> None:
        selected = cards.select_citations([make_citation(1), make_citation(1, doc="다른 규정")], "[1]")

        assert [c.doc for c in selected] == ["취업규칙"]


class TestAnswerMessage:
    def test_carries_the_ai_label_citations_feedback_and_follow_ups(self) -> None:
        message = cards.answer_message(
            "연차는 15일이에요[1].", citations=[make_citation(1)], followups=["3년 차는?"], stream_id="s-1"
        )

        stream, entity = message["entities"]
        assert stream == {"type": "streaminfo", "streamType": "final", "streamId": "s-1"}
        assert entity["type"] == "https://schema.org/Message"
        assert (entity["@type"], entity["@context"]) == ("Message", "https://schema.org")
        assert entity["additionalType"] == ["AIGeneratedContent"]
        assert [c["position"] for c in entity["citation"]] == [1]
        assert message["channelData"] == {"feedbackLoop": {"type": "default"}}
        assert message["attachments"][0]["contentType"] == cards.ADAPTIVE_CARD_CONTENT_TYPE

    def test_citations_the_text_never_marks_are_listed_at_the_end(self) -> None:
        message = cards.answer_message("연차는 15일이에요[1].", citations=[make_citation(1), make_citation(2)])

        assert message["text"].endswith(f"{labels.SOURCES_PREFIX} [2]")

    def test_single_root_message_entity(self) -> None:
        message = cards.answer_message("안녕하세요", feedback=False)

        assert [e["type"] for e in message["entities"]] == ["https://schema.org/Message"]
        assert "citation" not in message["entities"][0]
        assert "channelData" not in message and "attachments" not in message


class TestFollowupCard:
    def test_is_an_adaptive_card_1_5_with_a_submit_button_per_question(self) -> None:
        card = cards.followup_card(["남은 연차는 어떻게 확인해?", "연차를 미리 당겨 쓸 수 있어?"])

        assert (card["type"], card["version"]) == ("AdaptiveCard", "1.5")
        assert card["body"][0]["text"] == labels.FOLLOWUP_HEADING
        assert [a["type"] for a in card["actions"]] == ["Action.Submit", "Action.Submit"]
        back = card["actions"][0]["data"]["msteams"]
        assert (back["type"], back["displayText"], back["text"]) == (
            "messageBack",
            "남은 연차는 어떻게 확인해?",
            "남은 연차는 어떻게 확인해?",
        )
        assert json.loads(back["value"]) == {"action": cards.FOLLOWUP_ACTION, "question": "남은 연차는 어떻게 확인해?"}

    def test_long_question_is_cut_on_the_button_but_sent_whole(self) -> None:
        question = "출장 중에 주말이 끼어 있으면 그 주말에 대한 일비와 숙박비도 출장비로 정산할 수 있나요? " * 2

        [action] = cards.followup_card([question])["actions"]

        assert len(action["title"]) == cards.MAX_BUTTON_TITLE_CHARS
        assert action["data"]["question"] == question


class TestStreamUpdate:
    def test_informative_text_is_cut_to_1000_characters(self) -> None:
        update = cards.stream_update("가" * 1500, stream_type="informative", sequence=1, stream_id=None)

        assert len(update["text"]) == 1000
        assert update["entities"] == [{"type": "streaminfo", "streamType": "informative", "streamSequence": 1}]

    def test_streaming_text_is_sent_whole_with_the_stream_id(self) -> None:
        update = cards.stream_update("가" * 1500, stream_type="streaming", sequence=4, stream_id="s-1")

        assert len(update["text"]) == 1500 and update["type"] == "typing"
        assert update["entities"][0] == {
            "type": "streaminfo",
            "streamType": "streaming",
            "streamSequence": 4,
            "streamId": "s-1",
        }


class TestSplitText:
    def test_cuts_at_line_breaks_within_the_limit(self) -> None:
        text = "\n".join(f"{n}번 문단의 내용이에요." for n in range(30))

        parts = cards.split_text(text, 100)

        assert all(len(part) <= 100 for part in parts)
        assert all(not part.startswith("\n") and part.endswith("요.") for part in parts)
        assert "\n".join(parts) == text

    def test_text_without_breaks_is_cut_hard(self) -> None:
        assert cards.split_text("가" * 250, 100) == ["가" * 100, "가" * 100, "가" * 50]

    def test_short_text_is_one_part(self) -> None:
        assert cards.split_text("짧은 답변", 100) == ["짧은 답변"]
