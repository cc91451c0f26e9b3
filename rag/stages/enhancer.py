"""QueryEnhancer: makes a follow-up question stand alone by folding in the earlier exchange it leans on."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rag.models import Message
from rag.retrieval.query import ConversationFolder
from rag.stages.contracts import EnhancedQuery


class HistoryWindow(BaseModel):
    """How much of the conversation the enhancer reads: the last `messages`, each cut to `chars` (seed: 6 × 300).
    More context resolves longer threads; it also costs prompt tokens on every LLM turn."""

    model_config = ConfigDict(frozen=True)

    messages: int = Field(6, ge=1, le=50)
    chars: int = Field(300, ge=20, le=4000)


def recent_history(history: tuple[Message, ...], window: HistoryWindow | None = None) -> list[Message]:
    """The last `window.messages` messages, each cut to `window.chars` characters."""
    window = window or HistoryWindow()
    return [Message(role=m.role, content=m.content[: window.chars]) for m in history[-window.messages:]]


class OfflineQueryEnhancer:
    """Folds in the previous exchange when the new question leans on it (pronouns, 그럼, a short fragment):
    `text` prepends the previous question, `context` carries the exchange for retrieval."""

    def __init__(self, folder: ConversationFolder | None = None, *, window: HistoryWindow | None = None) -> None:
        self.folder = folder or ConversationFolder()
        self.window = window or HistoryWindow()

    async def run(self, question: str, history: tuple[Message, ...]) -> EnhancedQuery:
        folded = self.folder.fold(question, recent_history(history, self.window))
        if not folded.used_history:
            return EnhancedQuery(text=question, original=question)
        return EnhancedQuery(text=folded.standalone, original=question, used_history=True, context=folded.context)
