"""Slack text hygiene: read a user's message as plain text, and make untrusted text safe to post.

Untrusted text (the question, regulation text, model output) must never ping anyone or smuggle a
link: Slack turns `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>` and `<@U…>` into
notifications, and `<url|label>` into a disguised link. Posting escapes `& < >` (the only three
characters Slack decodes), spells special mentions as plain words and breaks bare `@here` with a
word joiner.
"""

from __future__ import annotations

import re

from rag.text import normalize_text

# The longest `<…>` body read as a token; also how far back an unclosed `<` may open one.
_MAX_TOKEN_CHARS = 500
# <…> tokens as Slack sends them in message text.
_ANGLE_TOKEN = re.compile(rf"<([^<>\n]{{1,{_MAX_TOKEN_CHARS}}})>")
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_BARE_BROADCAST = re.compile(r"@(here|channel|everyone)", re.IGNORECASE)
_BROADCAST_WORDS = ("here", "channel", "everyone")
_WORD_JOINER = "\u2060"
_BROADCAST_TOKENS = {"!here", "!channel", "!everyone"}
_SPACE_RUN = re.compile(r"[ \t]{2,}")


def _token_as_plain_text(inner: str, *, bot_user_id: str = "", in_question: bool = False) -> str:
    """What a `<…>` token reads as, without any of its powers.

    In a question, the bot's own mention and broadcasts (`<!here>`, …) say nothing about the
    question and are dropped; other mentions become `@name`.
    """
    target, _, label = inner.partition("|")
    if in_question and target.lower() in _BROADCAST_TOKENS:
        return ""
    if target.startswith("@"):
        if bot_user_id and target[1:] == bot_user_id:
            return ""
        return f"@{label}" if label else "@" + target[1:]
    if target.startswith("#"):
        return f"#{label}" if label else "#" + target[1:]
    if target.startswith("!subteam^"):
        return label if label.startswith("@") else f"@{label or 'group'}"
    if target.startswith("!"):
        # !here, !channel, !everyone, !date^…: keep the visible word only.
        word = target[1:].split("^", 1)[0]
        return label if word == "date" and label else f"@{word}"
    if not _URL_SCHEME.match(target):
        return f"<{inner}>"  # not a Slack token (e.g. <개정 2020. 1. 1.>): escaping keeps it as text
    if label:
        return f"{label} ({target})"
    return target.removeprefix("mailto:")


def read_user_text(text: str, *, bot_user_id: str = "") -> str:
    """A Slack message as the plain question it asks: the bot's mention and broadcasts removed, markup unwrapped.

    Slack escapes `& < >` in message text; they are decoded after the tokens are unwrapped.
    """
    plain = _ANGLE_TOKEN.sub(
        lambda m: _token_as_plain_text(m.group(1), bot_user_id=bot_user_id, in_question=True), text or ""
    )
    plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    plain = _BARE_BROADCAST.sub("", plain)
    return _SPACE_RUN.sub(" ", normalize_text(plain)).strip()


def mentions_user(text: str, user_id: str) -> bool:
    """Whether the message text mentions `user_id` (`<@U123>` or `<@U123|name>`)."""
    return bool(user_id) and re.search(rf"<@{re.escape(user_id)}(\|[^>]*)?>", text or "") is not None


def escape_mrkdwn(text: str) -> str:
    """Escape the three characters Slack decodes; nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _break_broadcast(match: re.Match[str]) -> str:
    return "@" + _WORD_JOINER + match.group(1)


def sanitize_untrusted(text: str) -> str:
    """Untrusted text made safe for mrkdwn or markdown: no mention, broadcast or disguised link survives."""
    plain = _ANGLE_TOKEN.sub(lambda m: _token_as_plain_text(m.group(1)), text or "")
    return _BARE_BROADCAST.sub(_break_broadcast, escape_mrkdwn(plain))


def _unsafe_tail_start(text: str) -> int:
    """Where a tail starts that a later delta could still turn into a token; len(text) when none."""
    cut = len(text)
    opening = text.rfind("<")
    tail = text[opening:] if opening != -1 else ""
    if tail and ">" not in tail and "\n" not in tail and len(tail) <= _MAX_TOKEN_CHARS + 1:
        cut = opening
    at = text.rfind("@", 0, cut)
    if at != -1:
        word = text[at + 1 : cut].lower()
        if len(word) < max(map(len, _BROADCAST_WORDS)) and any(w.startswith(word) for w in _BROADCAST_WORDS):
            if word not in _BROADCAST_WORDS:
                cut = at
    return cut


class StreamSanitizer:
    """Sanitises streamed text delta by delta, holding back a tail that could still become a token.

    Feeding every delta and then `flush()` yields exactly `sanitize_untrusted(whole text)`.
    """

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, delta: str) -> str:
        """Safe text for everything that can no longer change."""
        self._pending += delta
        cut = _unsafe_tail_start(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return sanitize_untrusted(ready)

    def flush(self) -> str:
        """The held-back tail, sanitised as it stands."""
        ready, self._pending = self._pending, ""
        return sanitize_untrusted(ready)


__all__ = [
    "StreamSanitizer",
    "escape_mrkdwn",
    "mentions_user",
    "read_user_text",
    "sanitize_untrusted",
]
