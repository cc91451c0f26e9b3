"""How a follow-up leans on the turn before: the openers that continue it ("그럼 21조는?", "근데 병가는?"), the
words that point back at it ("그 계약서"), and a correction of what was named ("A 말고 B").

The words are listed once; `rag.retrieval.lookup` strips an opener before it reads a reference, the planner
borrows a topic for a part that points back.
"""

from __future__ import annotations

import re

# Openers of a question that continues the last turn; "그 다음" may be written "그다음".
OPENERS = ("그럼", "그러면", "그렇다면", "그리고", "그 다음", "이번엔", "또", "그래서", "근데", "그런데", "아니면")
FOLLOWUP_OPENER = re.compile(r"^\s*(?:" + "|".join(w.replace(" ", r"\s*") for w in OPENERS) + r")\s*,?\s*")
# A part of a compound question that points back at the first part's topic ("…, 그 계약서는 어디에 내?").
POINTS_BACK = re.compile(r"(^|\s)(그|이|거기|그것)\s?")
# "A 말고 B", "A 아니고 B": the user corrects what they named first; B is what they mean.
CORRECTION = re.compile(r"^[^?]{1,40}?\s*(?:말고|아니고|아니라)\s*,?\s+(?=\S)")
