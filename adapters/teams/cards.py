"""Pure builders for the Teams wire format: AI-label and citation entities, follow-up cards, messages.

Every function returns plain Activity-protocol JSON (dicts with the wire's camelCase keys), so the
shapes can be unit-tested without the SDK. Teams' limits are applied here, not by callers:
≤ 20 citations, citation title ≤ 80 and abstract ≤ 160 characters, Adaptive Cards at version 1.5.
Every message text goes through `adapters.text.sanitize_untrusted`, the rules Slack's text follows: Teams
renders markdown and some HTML, so document text such as `<img onerror>` must arrive escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from adapters.teams import labels
from adapters.text import sanitize_untrusted
from rag.models import CITATION_MARKER, Citation

MAX_CITATIONS = 20
MAX_CITATION_TITLE_CHARS = 80
MAX_CITATION_ABSTRACT_CHARS = 160
MAX_CITATION_KEYWORD_CHARS = 28
MAX_INFORMATIVE_CHARS = 1000  # Teams rejects longer informative stream updates
MAX_BUTTON_TITLE_CHARS = 60  # longer titles are cut off by the Teams client anyway
ADAPTIVE_CARD_VERSION = "1.5"  # the highest version Teams renders in messages
ADAPTIVE_CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
FOLLOWUP_ACTION = "regbot.followup"  # `value.action` of a follow-up button press

_MARKER = CITATION_MARKER

StreamType = Literal["informative", "streaming", "final"]


def truncate(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + labels.TRUNCATION_MARK


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters with its line breaks kept (for answer bodies)."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + labels.TRUNCATION_MARK


def cited_positions(text: str) -> set[int]:
    """The `[n]` markers that appear in an answer text."""
    return {int(match) for match in _MARKER.findall(text)}


def select_citations(citations: Sequence[Citation], text: str) -> list[Citation]:
    """At most 20 citations, one per marker number, those the text cites first, in marker order."""
    by_position: dict[int, Citation] = {}
    for fallback, citation in enumerate(citations, start=1):
        position = citation.index if citation.index > 0 else fallback
        by_position.setdefault(position, citation.model_copy(update={"index": position}))
    cited = cited_positions(text)
    ranked = sorted(by_position.values(), key=lambda c: (c.index not in cited, c.index))
    return sorted(ranked[:MAX_CITATIONS], key=lambda c: c.index)


def citation_claim(citation: Citation) -> dict[str, Any]:
    """One schema.org `Claim` for the Message entity; Teams shows it behind the `[n]` marker."""
    appearance: dict[str, Any] = {
        "@type": "DigitalDocument",
        "name": truncate(citation.label or citation.doc, MAX_CITATION_TITLE_CHARS),
        "abstract": truncate(citation.quote or citation.title or citation.label, MAX_CITATION_ABSTRACT_CHARS),
    }
    if citation.url.startswith(("https://", "http://")):
        appearance["url"] = citation.url
    if citation.title:
        appearance["keywords"] = [truncate(citation.title, MAX_CITATION_KEYWORD_CHARS)]
    return {"@type": "Claim", "position": citation.index, "appearance": appearance}


def ai_message_entity(citations: Sequence[Citation] = ()) -> dict[str, Any]:
    """The single root `https://schema.org/Message` entity: the AI label plus the citation claims."""
    entity: dict[str, Any] = {
        "type": "https://schema.org/Message",
        "@type": "Message",
        "@context": "https://schema.org",
        "@id": "",
        "additionalType": ["AIGeneratedContent"],
    }
    if citations:
        entity["citation"] = [citation_claim(c) for c in citations[:MAX_CITATIONS]]
    return entity


def stream_info(
    stream_type: StreamType, *, stream_id: str | None = None, sequence: int | None = None
) -> dict[str, Any]:
    """The `streaminfo` entity; a final one carries the stream id and no sequence number."""
    entity: dict[str, Any] = {"type": "streaminfo", "streamType": stream_type}
    if stream_id:
        entity["streamId"] = stream_id
    if sequence is not None and stream_type != "final":
        entity["streamSequence"] = sequence
    return entity


def followup_card(followups: Sequence[str], *, language: str = "ko") -> dict[str, Any]:
    """An Adaptive Card (1.5) with one `Action.Submit` button per follow-up question.

    The buttons use Teams' `messageBack`, so the question shows in the chat as the user's message and
    reaches the bot with `value.action == FOLLOWUP_ACTION`, even in a channel without an @mention.
    """
    actions = [
        {
            "type": "Action.Submit",
            "title": truncate(question, MAX_BUTTON_TITLE_CHARS),
            "data": {
                "msteams": {
                    "type": "messageBack",
                    "displayText": question,
                    "text": question,
                    # Teams documents `value` as a JSON string; it arrives parsed as `activity.value`.
                    "value": json.dumps({"action": FOLLOWUP_ACTION, "question": question}, ensure_ascii=False),
                },
                "action": FOLLOWUP_ACTION,
                "question": question,
            },
        }
        for question in followups
    ]
    heading = labels.labels_for(language).FOLLOWUP_HEADING
    return {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": ADAPTIVE_CARD_VERSION,
        "body": [{"type": "TextBlock", "text": heading, "weight": "Bolder", "wrap": True}],
        "actions": actions,
    }


def followup_attachment(followups: Sequence[str], *, language: str = "ko") -> dict[str, Any]:
    """The follow-up card as a message attachment."""
    return {"contentType": ADAPTIVE_CARD_CONTENT_TYPE, "content": followup_card(followups, language=language)}


def with_uncited_markers(text: str, citations: Sequence[Citation], *, language: str = "ko") -> str:
    """The answer text plus a sources line for citations it never marks (Teams shows only marked ones)."""
    cited = cited_positions(text)
    missing = [c.index for c in citations if c.index not in cited]
    if not missing:
        return text
    markers = " ".join(f"[{index}]" for index in missing)
    return f"{text.rstrip()}\n\n{labels.labels_for(language).SOURCES_PREFIX} {markers}"


def answer_message(
    text: str,
    *,
    citations: Sequence[Citation] = (),
    followups: Sequence[str] = (),
    stream_id: str | None = None,
    feedback: bool = True,
    language: str = "ko",
) -> dict[str, Any]:
    """The final answer: text, AI label with citations, feedback buttons and the follow-up card (its labels in
    the question's `language`)."""
    selected = select_citations(citations, text)
    entities = [stream_info("final", stream_id=stream_id)] if stream_id else []
    entities.append(ai_message_entity(selected))
    message: dict[str, Any] = {
        "type": "message",
        "text": with_uncited_markers(sanitize_untrusted(text), selected, language=language),
        "textFormat": "markdown",
        "entities": entities,
    }
    if feedback:
        message["channelData"] = {"feedbackLoop": {"type": "default"}}
    if followups:
        message["attachments"] = [followup_attachment(followups, language=language)]
    return message


def plain_message(text: str, *, stream_id: str | None = None, ai_generated: bool = False) -> dict[str, Any]:
    """A message without buttons: an error, a progress edit, or one part of a split answer."""
    entities = [stream_info("final", stream_id=stream_id)] if stream_id else []
    if ai_generated:
        entities.append(ai_message_entity())
    message: dict[str, Any] = {"type": "message", "text": sanitize_untrusted(text), "textFormat": "markdown"}
    if entities:
        message["entities"] = entities
    return message


def stream_update(
    text: str, *, stream_type: Literal["informative", "streaming"], sequence: int, stream_id: str | None
) -> dict[str, Any]:
    """An intermediate streaming update (a `typing` activity); streaming text is cumulative."""
    text = sanitize_untrusted(text)
    if stream_type == "informative":
        text = truncate(text, MAX_INFORMATIVE_CHARS)
    return {
        "type": "typing",
        "text": text,
        "entities": [stream_info(stream_type, stream_id=stream_id, sequence=sequence)],
    }


def split_text(text: str, limit: int) -> list[str]:
    """`text` in parts of at most `limit` characters, cut at paragraph or line breaks where possible."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"))
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    parts.append(rest)
    return [part for part in parts if part] or [""]


__all__ = [
    "ADAPTIVE_CARD_CONTENT_TYPE",
    "ADAPTIVE_CARD_VERSION",
    "FOLLOWUP_ACTION",
    "MAX_CITATIONS",
    "MAX_CITATION_ABSTRACT_CHARS",
    "MAX_CITATION_TITLE_CHARS",
    "ai_message_entity",
    "answer_message",
    "citation_claim",
    "followup_attachment",
    "followup_card",
    "plain_message",
    "select_citations",
    "shorten",
    "split_text",
    "stream_info",
    "stream_update",
    "truncate",
]
