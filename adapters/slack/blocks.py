"""Block Kit for answers: one public builder, pure `_build_*` helpers.

Every string that reaches a block is either ours or passed through `sanitize_untrusted`/`escape_markup`
here; callers hand in the already-sanitised answer text (it is streamed, so it is sanitised on the way).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from adapters.slack import labels
from adapters.slack.payloads import (
    FEEDBACK_DOWN_ACTION,
    FEEDBACK_UP_ACTION,
    SHARE_ACTION,
    followup_action_id,
)
from adapters.text import escape_markup, sanitize_untrusted
from rag.lang import Framing
from rag.models import Citation

Block = dict[str, Any]

FOLLOWUPS_BLOCK_ID = "regbot_followups"
FEEDBACK_BLOCK_ID = "regbot_feedback"
SOURCES_BLOCK_ID = "regbot_sources"

MAX_FOLLOWUPS = 3
# Slack limits: button text 75 chars, context ≤ 10 elements, markdown block 12,000 chars per payload.
_BUTTON_TEXT_CHARS = 75
_FOLLOWUP_VALUE_CHARS = 300
_CONTEXT_ELEMENTS = 10
_CONTEXT_TEXT_CHARS = 2000
MARKDOWN_BLOCK_CHARS = 12000
_SAFE_URL = re.compile(r"^https?://[^\s|<>]+$")
_KOREAN = labels.labels_for("ko")


class AnswerBlocksRequest(BaseModel):
    """What a final answer message shows; empty fields leave their block out."""

    model_config = ConfigDict(frozen=True)

    answer_text: str = ""  # sanitised markdown; empty when the text was streamed natively
    question: str = ""  # untrusted; shown above the answer when it is shared in a channel
    citations: tuple[Citation, ...] = ()
    followups: tuple[str, ...] = ()  # untrusted
    feedback_value: str = ""  # value of the 👍/👎 buttons; empty: no feedback buttons
    share_value: str = ""  # value of the share button; empty: no share button
    language: str = "ko"  # the question's language (rag/lang): the captions and buttons are in it


def build_answer_blocks(request: AnswerBlocksRequest) -> list[Block]:
    """The blocks of a final answer: question, text, sources, follow-ups, feedback and share buttons."""
    said = labels.labels_for(request.language)
    blocks: list[Block | None] = [
        _build_question_block(request.question),
        _build_answer_block(request.answer_text),
        _build_sources_block(request.citations, said),
        _build_followups_block(request.followups),
        _build_feedback_block(request.feedback_value, request.share_value, said),
    ]
    return [block for block in blocks if block is not None]


def _build_question_block(question: str) -> Block | None:
    if not question.strip():
        return None
    text = f":speech_balloon: *{sanitize_untrusted(_one_line(question))}*"
    return {"type": "context", "elements": [_mrkdwn(text)]}


def _build_answer_block(answer_text: str) -> Block | None:
    if not answer_text.strip():
        return None
    return {"type": "markdown", "text": answer_text[:MARKDOWN_BLOCK_CHARS]}


def _build_sources_block(citations: tuple[Citation, ...], said: Framing = _KOREAN) -> Block | None:
    if not citations:
        return None
    elements = [_mrkdwn(f"*{said.SOURCES_CAPTION}*")]
    room = _CONTEXT_ELEMENTS - 1
    shown = citations if len(citations) <= room else citations[: room - 1]
    elements += [_mrkdwn(_citation_text(c)) for c in shown]
    if len(shown) < len(citations):
        elements.append(_mrkdwn(said.MORE_SOURCES.format(count=len(citations) - len(shown))))
    return {"type": "context", "block_id": SOURCES_BLOCK_ID, "elements": elements}


def _citation_text(citation: Citation) -> str:
    """`[1] <url|근로기준법 제60조 제1항> · 연차 유급휴가`, the link only for a plain http(s) URL."""
    label = escape_markup(citation.label)
    if _SAFE_URL.match(citation.url):
        label = f"<{citation.url}|{label}>"
    text = f"[{citation.index}] {label}" if citation.index else label
    if citation.title:
        text += f" · {escape_markup(_one_line(citation.title))}"
    return text[:_CONTEXT_TEXT_CHARS]


def _build_followups_block(followups: tuple[str, ...]) -> Block | None:
    questions = [q for q in (_one_line(f) for f in followups) if q][:MAX_FOLLOWUPS]
    if not questions:
        return None
    buttons = [
        _button(followup_action_id(i), _shorten(q, _BUTTON_TEXT_CHARS), q[:_FOLLOWUP_VALUE_CHARS])
        for i, q in enumerate(questions)
    ]
    return {"type": "actions", "block_id": FOLLOWUPS_BLOCK_ID, "elements": buttons}


def _build_feedback_block(feedback_value: str, share_value: str, said: Framing = _KOREAN) -> Block | None:
    buttons: list[Block] = []
    if feedback_value:
        buttons.append(_button(FEEDBACK_UP_ACTION, said.FEEDBACK_UP, feedback_value))
        buttons.append(_button(FEEDBACK_DOWN_ACTION, said.FEEDBACK_DOWN, feedback_value))
    if share_value:
        buttons.append(_button(SHARE_ACTION, said.SHARE_IN_CHANNEL, share_value, style="primary"))
    if not buttons:
        return None
    return {"type": "actions", "block_id": FEEDBACK_BLOCK_ID, "elements": buttons}


def _button(action_id: str, text: str, value: str, *, style: str = "") -> Block:
    button: Block = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def _mrkdwn(text: str) -> Block:
    return {"type": "mrkdwn", "text": text}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


__all__ = [
    "FEEDBACK_BLOCK_ID",
    "FOLLOWUPS_BLOCK_ID",
    "MAX_FOLLOWUPS",
    "SOURCES_BLOCK_ID",
    "AnswerBlocksRequest",
    "build_answer_blocks",
]
