"""Reading a Slack message as plain text; posting untrusted text follows the shared rules of `adapters.text`.

A user's message arrives as mrkdwn with `<@U…>`, `<!here>` and `<url|label>` tokens and `& < >` escaped;
`read_user_text` turns it into the plain question it asks.
"""

from __future__ import annotations

import re

from adapters.text import ANGLE_TOKEN, BARE_BROADCAST, token_as_plain_text
from rag.text import normalize_text

_SPACE_RUN = re.compile(r"[ \t]{2,}")


def read_user_text(text: str, *, bot_user_id: str = "") -> str:
    """A Slack message as the plain question it asks: the bot's mention and broadcasts removed, markup unwrapped.

    Slack escapes `& < >` in message text; they are decoded after the tokens are unwrapped.
    """
    plain = ANGLE_TOKEN.sub(
        lambda m: token_as_plain_text(m.group(1), bot_user_id=bot_user_id, in_question=True), text or ""
    )
    plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    plain = BARE_BROADCAST.sub("", plain)
    return _SPACE_RUN.sub(" ", normalize_text(plain)).strip()


def mentions_user(text: str, user_id: str) -> bool:
    """Whether the message text mentions `user_id` (`<@U123>` or `<@U123|name>`)."""
    return bool(user_id) and re.search(rf"<@{re.escape(user_id)}(\|[^>]*)?>", text or "") is not None


__all__ = ["mentions_user", "read_user_text"]
