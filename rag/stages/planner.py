"""QueryPlanner: one search query for a simple question, one per part for a truly compound one.

Public Korean results show rewrites and decomposition do not help single-hop questions, so the offline
planner splits only at explicit joins between two full questions (…이랑 …, 그리고, a mid-sentence "?").
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from rag.retrieval.tokenizer import Tokenizer

# Joins that separate two questions: "A이랑 B", "A하고 B", "A? 그리고 B", "A, 그리고 B", "A 그리고 B".
_SPLIT = re.compile(r"\?\s+(?:그리고\s+|또\s+|그럼\s+)?|,\s*그리고\s+|\s그리고\s+|(?<=[가-힣])(?:이랑|랑|하고)\s+")
MAX_PARTS = 3


class Strategy(StrEnum):
    SINGLE = "single"
    MULTI = "multi"


class QueryPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    intent: str
    keywords: tuple[str, ...] = ()
    search_queries: tuple[str, ...]
    sub_questions: tuple[str, ...] = ()  # the parts of a compound question, answered one by one
    strategy: Strategy = Strategy.SINGLE
    answer_style: str = "concise"
    hypothetical_answer: str = ""  # HyDE: a passage written as the answer might read, searched for vague questions


class OfflineQueryPlanner:
    """Splits compound questions at explicit joins when both sides carry their own topic words."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    async def run(self, question: str) -> QueryPlan:
        keywords = tuple(dict.fromkeys(t for t in self.tokenizer.tokens(question) if len(t) > 1))
        parts = [p.strip(" ,.?") for p in _SPLIT.split(question) if p and p.strip(" ,.?")]
        topical = [p for p in parts if len([t for t in self.tokenizer.tokens(p) if len(t) > 1]) >= 2]
        if len(parts) < 2 or len(topical) < 2:
            return QueryPlan(intent=question, keywords=keywords, search_queries=(question,))
        parts = topical[:MAX_PARTS]
        # A later part that says "그 계약서" keeps the link: it borrows the first part's topic words.
        head_topic = " ".join(self.tokenizer.tokens(parts[0])[:2])
        queries = [parts[0]] + [p if not re.search(r"(^|\s)(그|이|거기|그것)\s?", p) else f"{head_topic} {p}"
                                for p in parts[1:]]
        return QueryPlan(intent=question, keywords=keywords, search_queries=(question, *queries),
                         sub_questions=tuple(parts), strategy=Strategy.MULTI)
