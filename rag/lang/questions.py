"""How a Korean question asks: the question words (몇, 며칠, 얼마, 언제 …), the endings that ask (…나요, …까요,
…는지), and the joins between two questions asked at once ("연차는 며칠이고 병가는?").

One list of question words, read by the planner (does a part ask?), the router (does small talk carry a question?)
and the figure cues (`rag.lang.quantities`: 며칠, 얼마, 몇 ask for a number).
"""

from __future__ import annotations

import re

# Words that ask for a number: the answer is a figure ("며칠" → 15일, "얼마" → 8만원, "몇 주" → 30주).
AMOUNT_WORDS = ("며칠", "얼마", "몇")
QUESTION_WORDS = ("뭐", "뭘", "무엇", "무슨", *AMOUNT_WORDS, "언제", "어디", "어떻게", "어떤", "누가", "누구", "왜")
_WORDS = "|".join(QUESTION_WORDS)

# A part of a question that asks: it ends with "?", holds a question word or ends as a question ("…는지", "…나요").
ASKS = re.compile(r"\?\s*$|" + _WORDS + r"|는지|은지|ㄴ지|할까|나요|까요")
# A message that asks something besides its small talk ("고마워요, 근데 병가는 어떻게 돼?"): a question word, a
# question mark, or a spoken request or question ending.
QUESTION_CUE = re.compile(r"(\?|" + _WORDS + r"|돼\?|되나|나요|까요|가능|해야|받아|있어|없어|알려|인가요|인지"
                          r"|어떡|어쩌|할까)")

# Joins that separate two questions. Strong: "A? 그리고 B", "A, 그리고 B", "A 그리고 B", and a question word
# joined by 이고 ("A는 며칠이고 B는 …?", "A는 어떻게 되고, B는 …?"). Weak: "A이랑 B", "A하고 B" — not the verb's
# 하고 of "신고하고 싶은데".
_STRONG_JOIN = (r"\?\s+(?:그리고\s+|또\s+|그럼\s+)?|,\s*그리고\s+|\s그리고\s+"
                r"|(?:(?<=며칠)|(?<=얼마)|(?<=언제)|(?<=어디)|(?<=무엇)|(?<=뭐)|(?<=어떻게 되))(?:이고|고),?\s+")
_WEAK_JOIN = r"(?<=[가-힣])(?:이랑|랑|하고)(?!\s*(?:싶|있|나서|나면|난))(?:,\s*|\s+)"
# A clause ending in 고 and a comma ("…어떻게 계산되고, …", "뭘 적어야 하고, …") joins two questions when the clause
# before it asks something; "서류를 준비하고, 어디에 내?" stays one question.
_CLAUSE_JOIN = r"(?<=[가-힣])고,\s+"
# Group 1: a strong join; `clause`: a clause join; neither: a weak join.
QUESTION_JOIN = re.compile(f"({_STRONG_JOIN})|(?P<clause>{_CLAUSE_JOIN})|{_WEAK_JOIN}")
# The stem a split leaves ("계산되", "적어야 하") and how it is said when asked alone ("계산돼", "적어야 해").
BARE_STEM = re.compile(r"(되|하)$")
SPOKEN_ENDING = {"되": "돼", "하": "해"}


def spoken(part: str) -> str:
    """A part cut after a bare stem, as it would have been asked alone ("어떻게 계산되" → "어떻게 계산돼")."""
    return BARE_STEM.sub(lambda m: SPOKEN_ENDING[m.group(1)], part)
