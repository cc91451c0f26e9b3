"""What the playground page sends: a question, a 👍/👎, an article reference; validated before anything runs.

Ids come from the browser (a conversation id per tab, a user id per browser), so they are checked to be short
opaque tokens: they end up inside state-store keys and must not carry `:` or anything else structural.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from rag.text import normalize_text

# The page makes ids of 32 hex characters; anything of this shape is accepted.
BrowserId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{8,64}$")]

# Far above the service's own question limit (which answers with a readable message); this only bounds the body.
MAX_QUESTION_CHARS = 20_000
MAX_BODY_BYTES = 128 * 1024


class AskRequest(BaseModel):
    """`POST /api/playground/ask`: one question in a tab's conversation."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    question: Annotated[str, StringConstraints(max_length=MAX_QUESTION_CHARS)]
    conversation_id: BrowserId
    user_id: BrowserId | None = None  # ignored: the user is the server-issued session (older pages send it)

    @property
    def text(self) -> str:
        return normalize_text(self.question)


class FeedbackRequest(BaseModel):
    """`POST /api/playground/feedback`: a 👍/👎 on one answer (named by the turn id the ask response carried)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    conversation_id: BrowserId
    user_id: BrowserId | None = None  # ignored, as in AskRequest
    turn_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
    rating: Literal["up", "down"]
    comment: Annotated[str, StringConstraints(max_length=2000)] = ""


class ArticleRequest(BaseModel):
    """`GET /api/playground/article?doc=..&article=..`: the article a citation names."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    doc: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
    article: Annotated[str, StringConstraints(strip_whitespace=True, max_length=50)] = ""

    @property
    def reference(self) -> str:
        """`취업규칙 제20조`, as the structural lookup reads it."""
        return normalize_text(f"{self.doc} {self.article}".strip())


__all__ = [
    "MAX_BODY_BYTES",
    "ArticleRequest",
    "AskRequest",
    "BrowserId",
    "FeedbackRequest",
]
