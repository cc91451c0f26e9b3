"""Untrusted text made safe to show, with one set of rules for Slack, Teams and the web playground.

Untrusted text is a question, regulation text or model output. Shown anywhere, it must not ping anyone, smuggle
a disguised or script link, or become markup:
- Slack's `<…>` tokens (`<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<url|label>`) become the plain words
  they show, a disguised link shows its real address;
- a markdown link to a `javascript:`, `data:` (any scheme but http, https and mailto) becomes its label and
  target as text;
- a bare `@here`, `@channel` or `@everyone` is broken with a word joiner;
- for surfaces that render markup (Slack mrkdwn and markdown blocks, Teams markdown), `& < >` are escaped, which
  turns HTML such as `<img onerror>` or `<at>` mention tags into text. Both decode exactly these three.

`sanitize_untrusted` applies all of it (Slack, Teams); `neutralize_untrusted` all but the escaping, for the
playground, which sets text with `textContent`. `StreamSanitizer` applies either to a stream of deltas.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# The longest `<…>` body read as a token; also how far back an unclosed `<` or `[` may open one.
MAX_TOKEN_CHARS = 500
# <…> tokens as Slack sends them in message text.
ANGLE_TOKEN = re.compile(rf"<([^<>\n]{{1,{MAX_TOKEN_CHARS}}})>")
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
BARE_BROADCAST = re.compile(r"@(here|channel|everyone)", re.IGNORECASE)
_BROADCAST_WORDS = ("here", "channel", "everyone")
_WORD_JOINER = "\u2060"
_BROADCAST_TOKENS = {"!here", "!channel", "!everyone"}
# [label](scheme:target) whose scheme a browser or client would run or render instead of opening a page.
# The target may hold balanced parentheses, as in `javascript:alert(1)`.
_MARKDOWN_LINK = re.compile(
    rf"\[([^\[\]\n]{{0,{MAX_TOKEN_CHARS}}})\]\(\s*<?"
    rf"([a-z][a-z0-9+.-]*:[^()\s<>]{{0,{MAX_TOKEN_CHARS}}}(?:\([^()\s<>]{{0,{MAX_TOKEN_CHARS}}}\)[^()\s<>]*)*)"
    r">?\s*\)",
    re.IGNORECASE,
)
_SAFE_LINK_SCHEMES = ("http:", "https:", "mailto:")
# What `_MARKDOWN_LINK` does not take apart (a title `"t"`, deeper parentheses, entities): any `](` that opens an
# unsafe target is broken into `] (`, which no markdown reads as a link; the words stay.
_UNSAFE_LINK_OPEN = re.compile(r"\]\(\s*+<?\s*+(?=(?!(?:https?|mailto):)[a-z][a-z0-9+.-]*:)", re.IGNORECASE)
# A reference-style definition `[1]: javascript:…` (used by `[x][1]` or `[1]`): its colon is broken the same way.
_UNSAFE_LINK_DEFINITION = re.compile(
    r"^([ \t]{0,3}\[[^\[\]\n]{1,500}\]):(?=[ \t]*+<?(?!(?:https?|mailto):)[a-z][a-z0-9+.-]*:)",
    re.IGNORECASE | re.MULTILINE,
)
# A markdown link still being written: `[label`, `[label]` or `[label](target`.
_OPEN_MARKDOWN_LINK = re.compile(r"\[[^\[\]\n]*(\](\(\s*<?[^\s<>]*)?)?$")


def token_as_plain_text(inner: str, *, bot_user_id: str = "", in_question: bool = False) -> str:
    """What a Slack `<…>` token reads as, without any of its powers.

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


def escape_markup(text: str) -> str:
    """Escape the three characters Slack and Teams decode; nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _unwrap_unsafe_link(match: re.Match[str]) -> str:
    label, target = match.group(1), match.group(2)
    if target.lower().startswith(_SAFE_LINK_SCHEMES):
        return match.group(0)
    return f"{label} ({target})" if label else target


def _break_broadcast(match: re.Match[str]) -> str:
    return "@" + _WORD_JOINER + match.group(1)


def neutralize_untrusted(text: str) -> str:
    """Untrusted text without tokens, script links or broadcasts, not escaped (for text set as textContent)."""
    plain = ANGLE_TOKEN.sub(lambda m: token_as_plain_text(m.group(1)), text or "")
    plain = _MARKDOWN_LINK.sub(_unwrap_unsafe_link, plain)
    plain = _UNSAFE_LINK_OPEN.sub("] (", plain)
    plain = _UNSAFE_LINK_DEFINITION.sub(lambda m: m.group(1) + _WORD_JOINER + ":", plain)
    return BARE_BROADCAST.sub(_break_broadcast, plain)


def sanitize_untrusted(text: str) -> str:
    """Untrusted text made safe for Slack mrkdwn/markdown or Teams markdown: nothing pings, links or renders."""
    return escape_markup(neutralize_untrusted(text))


def _unsafe_tail_start(text: str) -> int:
    """Where a tail starts that a later delta could still turn into a token, link or broadcast; len(text) if none."""
    cut = len(text)
    opening = text.rfind("<")
    tail = text[opening:] if opening != -1 else ""
    if tail and ">" not in tail and "\n" not in tail and len(tail) <= MAX_TOKEN_CHARS + 1:
        cut = opening
    bracket = text.rfind("[", max(0, len(text) - 2 * MAX_TOKEN_CHARS - 8))
    if (bracket != -1 and bracket < cut and _OPEN_MARKDOWN_LINK.match(text, bracket)
            and not _MARKDOWN_LINK.match(text, bracket)):
        cut = bracket
    at = text.rfind("@", 0, cut)
    if at != -1:
        word = text[at + 1 : cut].lower()
        if len(word) < max(map(len, _BROADCAST_WORDS)) and any(w.startswith(word) for w in _BROADCAST_WORDS):
            if word not in _BROADCAST_WORDS:
                cut = at
    return cut


class StreamSanitizer:
    """Sanitises streamed text delta by delta, holding back a tail that could still become a token or link.

    Feeding every delta and then `flush()` yields exactly `render(whole text)`; `render` is
    `sanitize_untrusted` (the default) or `neutralize_untrusted`.
    """

    def __init__(self, render: Callable[[str], str] = sanitize_untrusted) -> None:
        self._render = render
        self._pending = ""

    def feed(self, delta: str) -> str:
        """Safe text for everything that can no longer change."""
        self._pending += delta
        cut = _unsafe_tail_start(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return self._render(ready)

    def flush(self) -> str:
        """The held-back tail, sanitised as it stands."""
        ready, self._pending = self._pending, ""
        return self._render(ready)


__all__ = [
    "ANGLE_TOKEN",
    "BARE_BROADCAST",
    "StreamSanitizer",
    "escape_markup",
    "neutralize_untrusted",
    "sanitize_untrusted",
    "token_as_plain_text",
]
