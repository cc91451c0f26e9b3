"""What an adapter needs from the bot: the TurnService protocol, implemented in `bot/service/service.py`.

An adapter verifies and normalises platform input into a `Turn`, asks the service for a stream of
AnswerEvents and renders them. It knows nothing of retrieval and never imports `bot/`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from rag.models import AnswerEvent, Citation, Message, Scope, Turn


class Feedback(BaseModel):
    """A 👍/👎 on an answer, stored with what was asked and answered."""

    model_config = ConfigDict(frozen=True)

    platform: Literal["slack", "teams", "web", "cli"]
    conversation_key: str
    user: str
    rating: Literal["up", "down"]
    question: str = ""
    answer: str = ""
    citations: tuple[Citation, ...] = ()
    comment: str = ""
    turn_id: str = ""  # the rated turn (`Turn.turn_id`), when the adapter still knows it


class ScopeRequest(BaseModel):
    """Where a turn comes from, so the service can resolve its access scope."""

    model_config = ConfigDict(frozen=True)

    platform: Literal["slack", "teams", "web", "cli"]
    workspace: str = ""  # Slack team id / Teams tenant id
    team: str = ""  # Teams team id
    channel: str = ""
    is_direct: bool = False


class TurnService(Protocol):
    """The bot service as adapters see it."""

    async def claim_event(self, key: str, *, ttl_s: int = 3600) -> bool:
        """True the first time `key` is seen (across replicas); False for a duplicate delivery."""
        ...

    async def has_history(self, conversation_key: str) -> bool:
        """Whether the store already holds this conversation (else the adapter may rebuild it)."""
        ...

    async def history(self, conversation_key: str) -> list[Message]:
        """The stored conversation, oldest first."""
        ...

    async def scope_for(self, request: ScopeRequest) -> Scope:
        """The collections and audience this place may search."""
        ...

    def answer(self, turn: Turn) -> AsyncIterator[AnswerEvent]:
        """Answer one turn: rate limits, per-conversation lock, history load/save, the RAG pipeline.

        Always ends with a `done` or an `error` event; never raises to the adapter.
        """
        ...

    async def record_feedback(self, feedback: Feedback) -> None:
        """Store a 👍/👎 with the question, answer and sources."""
        ...


__all__ = ["Feedback", "ScopeRequest", "TurnService"]
