"""What this process recently answered, so the buttons and feedback under an answer can act on its full text."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

RecordT = TypeVar("RecordT")


class RecentlyAnswered(Generic[RecordT]):
    """Id → record of the last `capacity` answers, oldest evicted first.

    Per process: a miss means another replica gave the answer (or this one restarted), and the caller carries on
    without the record (feedback is stored without its question, a share asks again).
    """

    def __init__(self, *, capacity: int = 2000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._records: OrderedDict[str, RecordT] = OrderedDict()

    def remember(self, answer_id: str, record: RecordT) -> None:
        self._records[answer_id] = record
        self._records.move_to_end(answer_id)
        while len(self._records) > self._capacity:
            self._records.popitem(last=False)

    def get(self, answer_id: str) -> RecordT | None:
        return self._records.get(answer_id)


__all__ = ["RecentlyAnswered"]
