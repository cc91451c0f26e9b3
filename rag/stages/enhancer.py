"""QueryEnhancer: makes a follow-up question stand alone by folding in the earlier user turns it leans on."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from rag.models import Message, Role

# Words that point back at the conversation: pronouns, ellipsis openers, "그럼".
_LEANING = re.compile(
    r"(^|\s)(그럼|그러면|그건|그거|그게|그걸|그것|거기|그\s|그때|그런|그렇게|이건|이거|이것|저건"
    r"|그래서|근데|그리고|또|그 외|그밖|그 밖)"
)
HISTORY_MESSAGES = 6
HISTORY_CHARS = 300


class EnhancedQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # the standalone question used for retrieval
    original: str
    used_history: bool = False


def recent_history(history: tuple[Message, ...]) -> list[Message]:
    """The last 6 messages, each cut to 300 characters."""
    return [Message(role=m.role, content=m.content[:HISTORY_CHARS]) for m in history[-HISTORY_MESSAGES:]]


class OfflineQueryEnhancer:
    """Prepends the previous user question when the new one leans on it (pronouns, 그럼, a short fragment)."""

    async def run(self, question: str, history: tuple[Message, ...]) -> EnhancedQuery:
        users = [m.content for m in recent_history(history) if m.role == Role.USER]
        if not users:
            return EnhancedQuery(text=question, original=question)
        leaning = bool(_LEANING.search(question)) or len(question.replace(" ", "")) <= 12
        if not leaning:
            return EnhancedQuery(text=question, original=question)
        return EnhancedQuery(text=f"{users[-1].rstrip('?.!~ ')} {question}", original=question, used_history=True)
