"""QueryPlanner: one search query for a simple question, one per part for a truly compound one.

Public Korean results show rewrites and decomposition do not help single-hop questions, so the offline
planner splits only at explicit joins between two full questions (…이랑 …, 그리고, a mid-sentence "?").
"""

from __future__ import annotations

import re

from rag.retrieval.tokenizer import Tokenizer
from rag.stages.contracts import QueryPlan, Strategy

# Joins that separate two questions. Strong: "A? 그리고 B", "A, 그리고 B", "A 그리고 B", and a question word
# joined by 이고 ("A는 며칠이고 B는 …?", "A는 어떻게 되고, B는 …?"). Weak: "A이랑 B", "A하고 B" — not the verb's
# 하고 of "신고하고 싶은데".
_STRONG_SPLIT = (r"\?\s+(?:그리고\s+|또\s+|그럼\s+)?|,\s*그리고\s+|\s그리고\s+"
                 r"|(?:(?<=며칠)|(?<=얼마)|(?<=언제)|(?<=어디)|(?<=무엇)|(?<=뭐)|(?<=어떻게 되))(?:이고|고),?\s+")
_WEAK_SPLIT = r"(?<=[가-힣])(?:이랑|랑|하고)(?!\s*(?:싶|있|나서|나면|난))(?:,\s*|\s+)"
# A clause ending in 고 and a comma ("…어떻게 계산되고, …", "뭘 적어야 하고, …") joins two questions when the clause
# before it asks something; "서류를 준비하고, 어디에 내?" stays one question.
_CLAUSE_SPLIT = r"(?<=[가-힣])고,\s+"
_SPLIT = re.compile(f"({_STRONG_SPLIT})|(?P<clause>{_CLAUSE_SPLIT})|{_WEAK_SPLIT}")
# The stem a split leaves ("계산되", "적어야 하") as it would have been asked alone.
_BARE_STEM = re.compile(r"(되|하)$")
_SPOKEN_ENDING = {"되": "돼", "하": "해"}
# A part that asks: it ends with "?" or holds a question word.
_ASKS = re.compile(r"\?\s*$|뭐|뭘|무엇|무슨|몇|며칠|얼마|언제|어디|어떻게|어떤|누가|누구|왜"
                   r"|는지|은지|ㄴ지|할까|나요|까요")
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
        parts = [_BARE_STEM.sub(lambda m: _SPOKEN_ENDING[m.group(1)], p) for p in topical[:MAX_PARTS]]
        # A later part that says "그 계약서" keeps the link: it borrows the first part's topic words.
        head_topic = " ".join(self.tokenizer.tokens(parts[0])[:2])
        queries = [parts[0]] + [p if not re.search(r"(^|\s)(그|이|거기|그것)\s?", p) else f"{head_topic} {p}"
                                for p in parts[1:]]
        return QueryPlan(intent=question, keywords=keywords, search_queries=(question, *queries),
                         sub_questions=tuple(parts), strategy=Strategy.MULTI)

    @staticmethod
    def _split(question: str) -> tuple[list[str], bool]:
        """The parts between joins, and whether every join was a strong one. What follows a "?" is a part only
        when it asks something too: "…출장비 나와? 공무원이야" is one question with its context."""
        parts: list[str] = []
        strong, start, after_mark = True, 0, False
        for join in _SPLIT.finditer(question):
            piece = question[start : join.start()]
            if join.group("clause") is not None and not _ASKS.search(piece):
                continue
            if after_mark and parts and not _ASKS.search(piece + "?" * join.group(0).startswith("?")):
                parts[-1] += " " + piece
            else:
                parts.append(piece)
            strong = strong and (join.group(1) or join.group("clause")) is not None
            start, after_mark = join.end(), join.group(0).startswith("?")
        last = question[start:]
        if after_mark and parts and not _ASKS.search(last):
            parts[-1] += " " + last
        else:
            parts.append(last)
        return [p.strip(" ,.?") for p in parts if p.strip(" ,.?")], strong

    def _topic_words(self, part: str) -> int:
        """Content nouns (verb stems such as 주다 or 궁금하다 name no topic)."""
        return len([t for t in self.tokenizer.tokens(part) if len(t) > 1 and not t.endswith("다")])
