"""Block Kit for answers: what each block shows, in which order, within Slack's limits."""

from __future__ import annotations

import json

from slack_sdk.models.blocks import Block

from adapters.slack import labels
from adapters.slack.blocks import (
    FEEDBACK_BLOCK_ID,
    FOLLOWUPS_BLOCK_ID,
    SOURCES_BLOCK_ID,
    AnswerBlocksRequest,
    _build_followups_block,
    _build_question_block,
    _build_sources_block,
    _citation_text,
    build_answer_blocks,
)
from rag.models import Citation


def make_citation(index: int = 1, doc: str = "취업규칙", article: str = "제20조", **fields) -> Citation:
    return Citation(index=index, doc=doc, article=article, **fields)


def button_texts(block: dict) -> list[str]:
    return [e["text"]["text"] for e in block["elements"]]


class TestBuildAnswerBlocks:
    def test_full_answer_has_text_sources_followups_and_feedback_in_that_order(self):
        blocks = build_answer_blocks(
            AnswerBlocksRequest(
                answer_text="연차는 15일이에요 [1].",
                citations=(make_citation(),),
                followups=("반차도 돼?",),
                feedback_value='{"id":"a1"}',
            )
        )

        assert [b["type"] for b in blocks] == ["markdown", "context", "actions", "actions"]
        assert [b.get("block_id") for b in blocks[1:]] == [SOURCES_BLOCK_ID, FOLLOWUPS_BLOCK_ID, FEEDBACK_BLOCK_ID]
        for block in blocks:
            Block.parse(block).validate_json()

    def test_streamed_answer_gets_only_the_blocks_below_the_text(self):
        blocks = build_answer_blocks(AnswerBlocksRequest(citations=(make_citation(),), feedback_value="v"))

        assert [b["type"] for b in blocks] == ["context", "actions"]

    def test_nothing_to_show_gives_no_blocks(self):
        assert build_answer_blocks(AnswerBlocksRequest()) == []

    def test_feedback_buttons_and_share_button_share_one_block(self):
        blocks = build_answer_blocks(AnswerBlocksRequest(feedback_value="f", share_value="s"))

        assert [e["action_id"] for e in blocks[0]["elements"]] == ["feedback_up", "feedback_down", "share_answer"]
        assert button_texts(blocks[0]) == [labels.FEEDBACK_UP, labels.FEEDBACK_DOWN, labels.SHARE_IN_CHANNEL]
        assert [e["value"] for e in blocks[0]["elements"]] == ["f", "f", "s"]


class TestSourcesBlock:
    def test_citation_links_to_its_source(self):
        text = _citation_text(make_citation(url="https://wiki.example.com/rules/20", title="연차 유급휴가"))

        assert text == "[1] <https://wiki.example.com/rules/20|취업규칙 제20조> · 연차 유급휴가"

    def test_citation_names_the_paragraph(self):
        assert _citation_text(make_citation(doc="근로기준법", article="제60조", paragraph="①")) == (
            "[1] 근로기준법 제60조 제1항"
        )

    def test_unsafe_urls_are_not_linked(self):
        for url in ("javascript:alert(1)", "https://x.example/a|<!here>", "https://x.example/a b"):
            text = _citation_text(make_citation(url=url))
            assert text == "[1] 취업규칙 제20조", url

    def test_untrusted_document_names_are_escaped(self):
        text = _citation_text(make_citation(doc="R&D <보안> 규정", title="<!channel> 공지"))

        assert text == "[1] R&amp;D &lt;보안&gt; 규정 제20조 · &lt;!channel&gt; 공지"

    def test_more_citations_than_fit_are_summarised(self):
        block = _build_sources_block(tuple(make_citation(index=i, article=f"제{i}조") for i in range(1, 15)))

        texts = [e["text"] for e in block["elements"]]
        assert len(texts) == 10
        assert texts[0] == f"*{labels.SOURCES_CAPTION}*"
        assert texts[-1] == labels.MORE_SOURCES.format(count=6)
        Block.parse(block).validate_json()


class TestFollowupsBlock:
    def test_at_most_three_followups_with_indexed_action_ids(self):
        block = _build_followups_block(("하나?", "둘?", "셋?", "넷?"))

        assert [e["action_id"] for e in block["elements"]] == ["followup_0", "followup_1", "followup_2"]
        assert [e["value"] for e in block["elements"]] == ["하나?", "둘?", "셋?"]

    def test_long_followup_is_shortened_on_the_button_and_kept_short_in_the_value(self):
        question = "연차 " * 200

        button = _build_followups_block((question,))["elements"][0]

        assert len(button["text"]["text"]) <= 75
        assert button["text"]["text"].endswith("…")
        assert len(button["value"]) <= 300

    def test_blank_followups_give_no_block(self):
        assert _build_followups_block(("  ", "")) is None


class TestQuestionBlock:
    def test_shared_question_is_shown_escaped_on_one_line(self):
        block = _build_question_block("연차\n<!here> 며칠?")

        assert block["elements"][0]["text"] == ":speech_balloon: *연차 @\u2060here 며칠?*"
        assert "<!here>" not in json.dumps(block, ensure_ascii=False)
