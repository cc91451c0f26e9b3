"""What the answer's buttons carry in their `value`, and the action ids they are registered under.

A button value holds at most 2,000 characters, so a value names the answer (`answer_id`, looked up in
the adapter's recent answers) and carries just enough to work without it on another replica.
"""

from __future__ import annotations

import json
import re
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rag.models import Citation

FOLLOWUP_ACTION = re.compile(r"^followup_\d$")
FEEDBACK_UP_ACTION = "feedback_up"
FEEDBACK_DOWN_ACTION = "feedback_down"
SHARE_ACTION = "share_answer"

_VALUE_MAX_CHARS = 2000
_QUESTION_MAX_CHARS = 500
_MAX_CITATIONS = 10


def followup_action_id(index: int) -> str:
    return f"followup_{index}"


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    def to_value(self) -> str:
        return json.dumps(self.model_dump(exclude_defaults=True), ensure_ascii=False, separators=(",", ":"))


class CitationRef(_Payload):
    """A citation cut down to what feedback needs."""

    d: str  # doc
    a: str = ""  # article
    p: str = ""  # paragraph

    @classmethod
    def of(cls, citation: Citation) -> CitationRef:
        return cls(d=citation.doc, a=citation.article, p=citation.paragraph)

    def to_citation(self, index: int) -> Citation:
        return Citation(index=index, doc=self.d, article=self.a, paragraph=self.p)


class FeedbackPayload(_Payload):
    """The value of the 👍/👎 buttons."""

    id: str  # answer id
    q: str = ""  # question, shortened
    c: tuple[CitationRef, ...] = ()

    @classmethod
    def build(cls, answer_id: str, question: str, citations: tuple[Citation, ...]) -> FeedbackPayload:
        refs = tuple(CitationRef.of(c) for c in citations[:_MAX_CITATIONS])
        payload = cls(id=answer_id, q=question[:_QUESTION_MAX_CHARS], c=refs)
        # Long document names could still overflow the value: drop citations, then the question.
        while len(payload.to_value()) > _VALUE_MAX_CHARS and payload.c:
            payload = payload.model_copy(update={"c": payload.c[:-1]})
        if len(payload.to_value()) > _VALUE_MAX_CHARS:
            payload = payload.model_copy(update={"q": ""})
        return payload

    def citations(self) -> tuple[Citation, ...]:
        return tuple(ref.to_citation(i) for i, ref in enumerate(self.c, start=1))


class SharePayload(_Payload):
    """The value of the "share in channel" button under a private slash-command answer."""

    id: str
    q: str = ""

    @classmethod
    def build(cls, answer_id: str, question: str) -> SharePayload:
        return cls(id=answer_id, q=question[:_QUESTION_MAX_CHARS])


_P = TypeVar("_P", bound=_Payload)


def parse_payload(model: type[_P], value: str) -> _P | None:
    """The payload in a button value, or None when the value is not ours."""
    try:
        return model.model_validate_json(value)
    except ValidationError:
        return None


Rating = Literal["up", "down"]

__all__ = [
    "FEEDBACK_DOWN_ACTION",
    "FEEDBACK_UP_ACTION",
    "FOLLOWUP_ACTION",
    "SHARE_ACTION",
    "FeedbackPayload",
    "Rating",
    "SharePayload",
    "followup_action_id",
    "parse_payload",
]
