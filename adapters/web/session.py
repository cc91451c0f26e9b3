"""Who is asking on the playground: a session the server issues, and the budgets a stranger cannot reset.

    sessions = PlaygroundSessions(secret=b"...")            # or None: a random key per process
    session = sessions.of(request)                          # the signed cookie's id, or a new one
    sessions.attach(response, session)                      # Set-Cookie when it was new

The user id of a turn is derived from the session, never from a field of the request body (DESIGN.md §3,
"Playground identity"): a browser that sends a fresh `user_id` with each question no longer gets a fresh rate
limit. The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site's page sends it), and
its id is signed (HMAC-SHA256), so it cannot be chosen either. A client that drops the cookie gets a new
session each time, which is why `PlaygroundBudget` also limits each client address and the whole playground.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

SESSION_COOKIE = "regbot_session"
ACCESS_COOKIE = "regbot_access"
_SESSION_AGE_S = 30 * 86400


@dataclass(frozen=True)
class PlaygroundSession:
    """One browser's session: its id (a user id for limits, history and votes) and whether it is new."""

    session_id: str
    cookie: str
    new: bool

    @property
    def user(self) -> str:
        return f"session-{self.session_id}"


class PlaygroundSessions:
    """Issues and verifies the signed session cookie.

    Args:
        secret: the signing key (`REGBOT_SESSION_SECRET`); None makes a random one, so sessions last as long as
            the process and are not shared between replicas (a new session costs only the rate-limit history).
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._key = secret or secrets.token_bytes(32)

    def of(self, request: web.Request) -> PlaygroundSession:
        """The request's session when its cookie carries a valid signature; otherwise a new one."""
        cookie = request.cookies.get(SESSION_COOKIE, "")
        session_id, _, signature = cookie.partition(".")
        if len(session_id) == 32 and session_id.isalnum() and hmac.compare_digest(signature, self._sign(session_id)):
            return PlaygroundSession(session_id=session_id, cookie=cookie, new=False)
        session_id = secrets.token_hex(16)
        return PlaygroundSession(session_id=session_id, cookie=f"{session_id}.{self._sign(session_id)}", new=True)

    def attach(self, response: web.StreamResponse, session: PlaygroundSession) -> None:
        """Set the cookie on `response` when the session is new (before the response is prepared)."""
        if session.new:
            response.set_cookie(SESSION_COOKIE, session.cookie, max_age=_SESSION_AGE_S, path="/", httponly=True,
                                samesite="Strict")

    def has_access(self, request: web.Request, session: PlaygroundSession, code: str) -> bool:
        """Whether this session entered `code` (the shared access code); always True when no code is set."""
        if not code:
            return True
        return not session.new and hmac.compare_digest(request.cookies.get(ACCESS_COOKIE, ""),
                                                       self._access_token(session, code))

    def grant_access(self, response: web.StreamResponse, session: PlaygroundSession, code: str) -> None:
        """Remember on `response` that this session entered `code`: a cookie bound to the session and the code,
        so changing REGBOT_PLAYGROUND_ACCESS_CODE asks everyone again."""
        self.attach(response, session)
        response.set_cookie(ACCESS_COOKIE, self._access_token(session, code), max_age=_SESSION_AGE_S, path="/",
                            httponly=True, samesite="Strict")

    def _access_token(self, session: PlaygroundSession, code: str) -> str:
        code_digest = hashlib.sha256(code.encode()).hexdigest()
        return self._sign(f"access:{session.session_id}:{code_digest}")

    def _sign(self, session_id: str) -> str:
        return hmac.new(self._key, session_id.encode(), hashlib.sha256).hexdigest()[:32]


class PlaygroundBudget:
    """Questions per minute for each client address and for the whole playground (token buckets, in-process).

    The service's own per-user limit still applies to each session; these catch a client that sheds its
    cookie, and bound what a published playground can cost in total.

    Args:
        per_address_per_min: questions a client address may ask a minute (0: no address limit).
        total_per_min: questions the playground answers a minute in all (0: no total limit).
        clock: monotonic seconds.
        max_addresses: addresses remembered (the least recently seen is forgotten first).
    """

    def __init__(self, *, per_address_per_min: float, total_per_min: float,
                 clock: Callable[[], float] = time.monotonic, max_addresses: int = 10_000) -> None:
        if per_address_per_min < 0 or total_per_min < 0:
            raise ValueError("playground budgets must be 0 (off) or positive")
        self._per_address = per_address_per_min
        self._total = total_per_min
        self._clock = clock
        self._max_addresses = max_addresses
        self._addresses: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._all = (total_per_min, clock())

    def take(self, address: str) -> float:
        """0 when a question from `address` may go ahead (and is counted); else the seconds until one may."""
        now = self._clock()
        wait_all = self._wait(self._all, self._total, now) if self._total else 0.0
        address_bucket = self._addresses.get(address, (self._per_address, now))
        wait_address = self._wait(address_bucket, self._per_address, now) if self._per_address else 0.0
        if wait_all or wait_address:
            return max(wait_all, wait_address)
        if self._total:
            self._all = (self._refilled(self._all, self._total, now) - 1, now)
        if self._per_address:
            self._addresses[address] = (self._refilled(address_bucket, self._per_address, now) - 1, now)
            self._addresses.move_to_end(address)
            while len(self._addresses) > self._max_addresses:
                self._addresses.popitem(last=False)
        return 0.0

    @staticmethod
    def _refilled(bucket: tuple[float, float], per_min: float, now: float) -> float:
        tokens, at = bucket
        return min(per_min, tokens + (now - at) * per_min / 60.0)

    def _wait(self, bucket: tuple[float, float], per_min: float, now: float) -> float:
        tokens = self._refilled(bucket, per_min, now)
        return 0.0 if tokens >= 1 else (1 - tokens) * 60.0 / per_min


__all__ = ["ACCESS_COOKIE", "SESSION_COOKIE", "PlaygroundBudget", "PlaygroundSession", "PlaygroundSessions"]
