"""Small talk in English and Vietnamese, by kind (the kinds `rag/stages/router.py` knows): only what the Korean
router's patterns do not already catch ("hi", "thanks", "bye" they do). A message that names a glossary topic is
a question, never small talk; the caller checks that first."""

from __future__ import annotations

import re

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("identity", re.compile(r"\b(who|what)\s+are\s+you\b|\bare\s+you\s+(a\s+)?(human|person|bot|robot|real|an?\s+ai)"
                            r"|\bbạn\s+là\s+(ai|người|bot|máy)|\bban\s+la\s+ai\b", re.I)),
    ("capability", re.compile(r"\bwhat\s+(can|could)\s+(i|you)\s+(ask|do|answer)|\bwhat\s+do\s+you\s+know"
                              r"|\bwhich\s+(regulations|rules|documents|laws)\b"
                              r"|\b(tôi|mình)\s+(có\s+thể\s+)?hỏi\s+(gì|những\s+gì)|\bbạn\s+(biết|làm\s+được)\s+gì",
                              re.I)),
    ("usage", re.compile(r"\bhow\s+(do|can|should)\s+i\s+(use|ask)\s+(you|this|the\s+bot)|^\s*help\s*[?!.]*\s*$"
                         r"|\bdùng\s+(bạn|bot)\s+(thế|như)\s+nào|\bcách\s+(dùng|sử\s+dụng)", re.I)),
    ("goodbye", re.compile(r"\b(good\s*bye|see\s+you|have\s+a\s+nice\s+(day|weekend)|tạm\s+biệt|hẹn\s+gặp\s+lại)",
                           re.I)),
    ("thanks", re.compile(r"\b(thanks|thank\s+you|thx|cheers)\b|cảm\s+ơn|cám\s+ơn|cam\s+on", re.I)),
    ("greeting", re.compile(r"^\s*(hi|hello|hey|good\s+(morning|afternoon|evening)|xin\s+chào|chào(\s+bạn)?"
                            r"|xin\s+chao|chao\s+ban)\b", re.I)),
    ("apology", re.compile(r"\b(sorry|my\s+bad)\b|xin\s+lỗi", re.I)),
    ("praise", re.compile(r"\b(good\s+job|well\s+done|great\s+answer|very\s+helpful)\b|giỏi\s+quá|hay\s+quá", re.I)),
    ("test", re.compile(r"^\s*(test|testing|ping)\s*[.!?]*\s*$", re.I)),
    ("reaction", re.compile(r"^\s*(ok|okay|cool|great|nice|got\s+it|i\s+see|alright|sure|vâng|ừ|dạ|được)"
                            r"\s*[.!?]*\s*$", re.I)),
)
# Words of a question about the world rather than the regulations: declined, not chatted about.
_OFF_TOPIC = re.compile(r"\b(weather|stock|bitcoin|recipe|movie|football|song|joke)\b|thời\s+tiết|bóng\s+đá", re.I)


def foreign_smalltalk_kind(text: str) -> str:
    """The kind of small talk an English or Vietnamese message is, or ""."""
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return "off_topic" if _OFF_TOPIC.search(text) else ""
