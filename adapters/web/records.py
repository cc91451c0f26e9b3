"""What each streamed answer was, so a 👍/👎 on it is stored with its question, answer and sources."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from adapters.answered import RecentlyAnswered
from rag.models import Citation


class AnsweredTurn(BaseModel):
    """One answered question of a playground conversation."""

    model_config = ConfigDict(frozen=True)

    conversation_key: str
    user: str = ""  # the session that asked: only it may rate the answer
    question: str
    answer: str
    citations: tuple[Citation, ...] = ()
    language: str = ""  # the answer's language as the understanding decided it ("": read the question's letters)


class AnsweredTurns(RecentlyAnswered[AnsweredTurn]):
    """Turn id → what it answered, for the 👍/👎 under it."""


__all__ = ["AnsweredTurn", "AnsweredTurns"]
