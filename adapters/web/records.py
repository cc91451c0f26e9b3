"""What each streamed answer was, so a 👍/👎 on it is stored with its question, answer and sources."""

from __future__ import annotations

from collections import OrderedDict

from pydantic import BaseModel, ConfigDict

from rag.models import Citation


class AnsweredTurn(BaseModel):
    """One answered question of a playground conversation."""

    model_config = ConfigDict(frozen=True)

    conversation_key: str
    question: str
    answer: str
    citations: tuple[Citation, ...] = ()


class AnsweredTurns:
    """Turn id → what it answered. Bounded and per process, like the Teams adapter's record of sent answers:
    feedback that reaches a replica which did not give the answer is still stored, without the question."""

    def __init__(self, *, capacity: int = 2000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._items: OrderedDict[str, AnsweredTurn] = OrderedDict()

    def remember(self, turn_id: str, answered: AnsweredTurn) -> None:
        self._items[turn_id] = answered
        self._items.move_to_end(turn_id)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)

    def get(self, turn_id: str) -> AnsweredTurn | None:
        return self._items.get(turn_id)


__all__ = ["AnsweredTurn", "AnsweredTurns"]
