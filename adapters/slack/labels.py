"""The Slack adapter's own button labels and captions; every other user-facing text is in rag/messages.py."""

FEEDBACK_UP = "👍 도움이 됐어요"
FEEDBACK_DOWN = "👎 아쉬워요"
SHARE_IN_CHANNEL = "채널에 공유"
SOURCES_CAPTION = "출처"
MORE_SOURCES = "외 {count}건"
