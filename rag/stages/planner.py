"""QueryPlanner: one search query for a simple question, one per part for a truly compound one.

Public Korean results show rewrites and decomposition do not help single-hop questions, so the offline
planner splits only at explicit joins between two full questions (…이랑 …, 그리고, a mid-sentence "?").
"""

from __future__ import annotations

from rag.lang.followup import POINTS_BACK
from rag.lang.questions import ASKS, QUESTION_JOIN, spoken
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.contracts import QueryPlan, Strategy

MAX_PARTS = 3


class OfflineQueryPlanner:
    """Splits compound questions at explicit joins when both sides carry their own topic words."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    async def run(self, question: str) -> QueryPlan:
        keywords = tuple(dict.fromkeys(t for t in self.tokenizer.tokens(question) if len(t) > 1))
        parts, strong = self._split(question)
        # Each side must carry its own topic: one noun after a strong join ("월급은 한 달에 몇 번 줘야 해?"), two
        # nouns after a weak one (so "연차랑 병가 차이" stays one question).
        topical = [p for p in parts if self._topic_words(p) >= (1 if strong else 2)]
        if len(parts) < 2 or len(topical) < 2:
            return QueryPlan(intent=question, keywords=keywords, search_queries=(question,))
        parts = [spoken(p) for p in topical[:MAX_PARTS]]
        # A later part that says "그 계약서" keeps the link: it borrows the first part's topic words.
        head_topic = " ".join(self.tokenizer.tokens(parts[0])[:2])
        queries = [parts[0]] + [p if not POINTS_BACK.search(p) else f"{head_topic} {p}"
                                for p in parts[1:]]
        return QueryPlan(intent=question, keywords=keywords, search_queries=(question, *queries),
                         sub_questions=tuple(parts), strategy=Strategy.MULTI)

    @staticmethod
    def _split(question: str) -> tuple[list[str], bool]:
        """The parts between joins, and whether every join was a strong one. What follows a "?" is a part only
        when it asks something too: "…출장비 나와? 공무원이야" is one question with its context."""
        parts: list[str] = []
        strong, start, after_mark = True, 0, False
        for join in QUESTION_JOIN.finditer(question):
            piece = question[start : join.start()]
            if join.group("clause") is not None and not ASKS.search(piece):
                continue
            if after_mark and parts and not ASKS.search(piece + "?" * join.group(0).startswith("?")):
                parts[-1] += " " + piece
            else:
                parts.append(piece)
            strong = strong and (join.group(1) or join.group("clause")) is not None
            start, after_mark = join.end(), join.group(0).startswith("?")
        last = question[start:]
        if after_mark and parts and not ASKS.search(last):
            parts[-1] += " " + last
        else:
            parts.append(last)
        return [p.strip(" ,.?") for p in parts if p.strip(" ,.?")], strong

    def _topic_words(self, part: str) -> int:
        """Content nouns (verb stems such as 주다 or 궁금하다 name no topic)."""
        return len([t for t in self.tokenizer.tokens(part) if len(t) > 1 and not t.endswith("다")])
