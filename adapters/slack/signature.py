"""Slack's request signature, checked on the raw body before anything parses it.

Bolt parses the body when it builds its request object, before its own signature middleware runs, so a
stranger's unsigned `{"x":` used to end in a 500 and a traceback. Here the signature comes first: what is not
signed by Slack is a 401 whatever its bytes are, and only then is the body read as text and parsed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from slack_sdk.signature import Clock, SignatureVerifier

# Unix seconds have 10 digits until the year 2286; anything longer is not a time Slack sent.
_MAX_TIMESTAMP_DIGITS = 12


class _InjectedClock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


class SlackSignature:
    """Whether a request body was signed by Slack (v0 HMAC-SHA256, timestamp within 5 minutes).

    Args:
        signing_secret: the app's signing secret.
        clock: wall-clock seconds (Slack's timestamps are Unix time).
    """

    def __init__(self, signing_secret: str, *, clock: Callable[[], float] = time.time) -> None:
        self._verifier = SignatureVerifier(signing_secret, clock=_InjectedClock(clock))

    def verify(self, body: bytes, timestamp: str | None, signature: str | None) -> bool:
        """True only for a well-formed, fresh, matching signature; never raises on what a stranger sends."""
        if not timestamp or not signature or not (timestamp.isascii() and timestamp.isdigit()):
            return False
        if len(timestamp) > _MAX_TIMESTAMP_DIGITS:
            return False  # 309+ digits overflow a float in the freshness check, 4301+ exceed int()'s limit
        if not signature.isascii():  # hmac.compare_digest refuses non-ASCII text
            return False
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return False  # Slack signs UTF-8 text only
        return self._verifier.is_valid(text, timestamp, signature)


__all__ = ["SlackSignature"]
