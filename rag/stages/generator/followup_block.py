"""The follow-up block at the end of the answer LLM's reply: held back from the stream, parsed into questions.

The answer and its suggested next questions come in one call; the block after `FOLLOWUP_MARKER` is never shown.
"""

from __future__ import annotations

import re

FOLLOWUP_MARKER = "<후속질문>"

# The follow-up block when the model dressed the marker up (bold, a colon, no angle brackets).
_LOOSE_FOLLOWUP_HEADING = re.compile(r"\n[ \t*#]*<?후속\s?질문>?[ \t*:]*\n")
_LIST_PREFIX = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s*")


class FollowupSplitter:
    """Separates the streamed answer from the follow-up block after `FOLLOWUP_MARKER`.

    Text that could be the start of the marker is held back until the next delta shows it is not, so the
    user never sees the marker or the questions below it.
    """

    def __init__(self, marker: str = FOLLOWUP_MARKER) -> None:
        self.marker = marker
        self._pending = ""
        self._tail: list[str] = []
        self._in_block = False

    def feed(self, delta: str) -> str:
        """The part of `delta` (plus held-back text) that is safe to show now."""
        if self._in_block:
            self._tail.append(delta)
            return ""
        self._pending += delta
        at = self._pending.find(self.marker)
        if at >= 0:
            visible = self._pending[:at]
            self._tail.append(self._pending[at + len(self.marker):])
            self._pending = ""
            self._in_block = True
            return visible
        hold = next((k for k in range(len(self.marker) - 1, 0, -1) if self._pending.endswith(self.marker[:k])), 0)
        visible = self._pending[: len(self._pending) - hold]
        self._pending = self._pending[len(self._pending) - hold:]
        return visible

    def close(self) -> str:
        """Whatever was held back when the stream ended without completing the marker."""
        visible, self._pending = ("" if self._in_block else self._pending), ""
        return visible

    @property
    def followups(self) -> tuple[str, ...]:
        return parse_followups("".join(self._tail))


def parse_followups(block: str) -> tuple[str, ...]:
    """One question a line, list markers and quotes stripped."""
    out: list[str] = []
    for line in block.splitlines():
        line = _LIST_PREFIX.sub("", line).strip().strip('"“”').strip()
        if line and line not in out:
            out.append(line)
    return tuple(out)


def split_off_followups(text: str) -> tuple[str, tuple[str, ...]]:
    """(answer, follow-ups) from a whole reply, accepting the marker or a dressed-up 후속질문 heading."""
    at = text.find(FOLLOWUP_MARKER)
    if at >= 0:
        return text[:at].rstrip(), parse_followups(text[at + len(FOLLOWUP_MARKER):])
    match = _LOOSE_FOLLOWUP_HEADING.search(text)
    if match:
        return text[: match.start()].rstrip(), parse_followups(text[match.end():])
    return text.rstrip(), ()

