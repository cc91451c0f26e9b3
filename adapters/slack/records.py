"""Recently given answers, so buttons under them (feedback, share) can act on the full text."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict

from adapters.answered import RecentlyAnswered
from rag.models import Citation


class AnswerRecord(BaseModel):
    """An answer as shown to the user, with what was asked."""

    model_config = ConfigDict(frozen=True)

    answer_id: str
    conversation_key: str
    question: str
    answer: str
    citations: tuple[Citation, ...] = ()
    followups: tuple[str, ...] = ()
    turn_id: str = ""  # the answered Turn, so feedback joins its turn record


class RecentAnswers(RecentlyAnswered[AnswerRecord]):
    """The last answers of this process by `answer_id` (the id their buttons carry)."""

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex[:16]


__all__ = ["AnswerRecord", "RecentAnswers"]
