"""AnswerEvents as Server-Sent Events: one `event: <kind>` frame per AnswerEvent, its JSON on one `data:` line."""

from __future__ import annotations

import json
from typing import Any

from rag.models import AnswerEvent, AnswerEventKind

SSE_CONTENT_TYPE = "text/event-stream"

# The final Answer without the ranked evidence and the flow log: those are for eval and debugging, they can be
# large, and the page shows only what a chat platform would.
_DONE_EXCLUDE: dict[str, Any] = {"answer": {"retrieved", "notes"}}


def event_payload(event: AnswerEvent) -> dict[str, Any]:
    """The JSON the page receives for one event."""
    exclude = _DONE_EXCLUDE if event.kind == AnswerEventKind.DONE else None
    return event.model_dump(mode="json", exclude=exclude)


def encode_event(event: AnswerEvent) -> bytes:
    """One SSE frame; JSON escapes newlines, so the payload always fits a single `data:` line."""
    data = json.dumps(event_payload(event), ensure_ascii=False, separators=(",", ":"))
    return f"event: {event.kind.value}\ndata: {data}\n\n".encode()


__all__ = ["SSE_CONTENT_TYPE", "encode_event", "event_payload"]
