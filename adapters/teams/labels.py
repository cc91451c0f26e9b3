"""The Teams adapter's own button and card labels; everything else a user reads is in rag/messages.py.

The module's constants are the Korean labels; `labels_for(language)` gives the card's labels in the asker's
language (the language of the question, rag/lang).
"""

from rag.lang import label_set

# Heading of the Adaptive Card that carries the follow-up question buttons.
FOLLOWUP_HEADING = "이어서 물어보기"

# Prefix of the line that lists citation markers the answer text did not mention inline.
SOURCES_PREFIX = "출처:"

# Appended where a too-long answer had to be cut to fit one Teams message.
TRUNCATION_MARK = "…"

KOREAN = {"FOLLOWUP_HEADING": FOLLOWUP_HEADING, "SOURCES_PREFIX": SOURCES_PREFIX}
ENGLISH = {"FOLLOWUP_HEADING": "Ask next", "SOURCES_PREFIX": "Sources:"}
VIETNAMESE = {"FOLLOWUP_HEADING": "Hỏi tiếp", "SOURCES_PREFIX": "Nguồn:"}
labels_for = label_set(KOREAN, ENGLISH, VIETNAMESE)

# The command word of structural lookups (`규정 취업규칙 제20조`), as listed in the app manifest's commands.
LOOKUP_COMMAND = "규정"
