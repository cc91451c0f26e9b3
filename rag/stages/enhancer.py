"""QueryEnhancer: makes a follow-up question stand alone by folding in the earlier exchange it leans on."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rag.models import Message
from rag.retrieval.query import ConversationFolder

HISTORY_MESSAGES = 6
HISTORY_CHARS = 300


class EnhancedQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # the standalone question (graded and answered)
    original: str
    used_history: bool = False
    # What a follow-up leans on (the earlier question and the reply to it): retrieval searches it at a lower
    # weight than the question's own words. Empty when the question stands alone or an LLM rewrote it.
    context: str = ""


def recent_history(history: tuple[Message, ...]) -> list[Message]:
    """The last 6 messages, each cut to 300 characters."""
    return [Message(role=m.role, content=m.content[:HISTORY_CHARS]) for m in history[-HISTORY_MESSAGES:]]


class OfflineQueryEnhancer:
    """Folds in the previous exchange when the new question leans on it (pronouns, 그럼, a short fragment):
    `text` prepends the previous question, `context` carries the exchange for retrieval."""

    def __init__(self, folder: ConversationFolder | None = None) -> None:
        self.folder = folder or ConversationFolder()

    async def run(self, question: str, history: tuple[Message, ...]) -> EnhancedQuery:
        folded = self.folder.fold(question, recent_history(history))
        if not folded.used_history:
            return EnhancedQuery(text=question, original=question)
        return EnhancedQuery(text=folded.standalone, original=question, used_history=True, context=folded.context)
