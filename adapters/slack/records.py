"""Recently given answers, so buttons under them (feedback, share) can act on the full text."""

from __future__ import annotations

import uuid
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict

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


class RecentAnswers:
    """The last answers of this process, oldest evicted first; a miss means another replica or a restart."""

    def __init__(self, *, capacity: int = 1000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._records: OrderedDict[str, AnswerRecord] = OrderedDict()

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex[:16]

    def remember(self, record: AnswerRecord) -> None:
        self._records[record.answer_id] = record
        self._records.move_to_end(record.answer_id)
        while len(self._records) > self._capacity:
            self._records.popitem(last=False)

    def get(self, answer_id: str) -> AnswerRecord | None:
        return self._records.get(answer_id)


__all__ = ["AnswerRecord", "RecentAnswers"]
