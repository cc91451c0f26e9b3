"""The Slack adapter's own button labels and captions; every other user-facing text is in rag/messages.py.

The module's constants are the Korean labels; `labels_for(language)` gives them in the asker's language (the
language of the question, rag/lang), so an English question gets English buttons under its answer.
"""

from rag.lang import label_set

FEEDBACK_UP = "👍 도움이 됐어요"
FEEDBACK_DOWN = "👎 아쉬워요"
SHARE_IN_CHANNEL = "채널에 공유"
SOURCES_CAPTION = "출처"
MORE_SOURCES = "외 {count}건"

KOREAN = {name: value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str)}
ENGLISH = {
    "FEEDBACK_UP": "👍 Helpful",
    "FEEDBACK_DOWN": "👎 Not helpful",
    "SHARE_IN_CHANNEL": "Share in channel",
    "SOURCES_CAPTION": "Sources",
    "MORE_SOURCES": "and {count} more",
}
VIETNAMESE = {
    "FEEDBACK_UP": "👍 Hữu ích",
    "FEEDBACK_DOWN": "👎 Chưa hữu ích",
    "SHARE_IN_CHANNEL": "Chia sẻ vào kênh",
    "SOURCES_CAPTION": "Nguồn",
    "MORE_SOURCES": "và {count} nguồn khác",
}
labels_for = label_set(KOREAN, ENGLISH, VIETNAMESE)
