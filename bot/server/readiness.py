"""What `/readyz` reports: each dependency by name, its state, and whether the bot can answer at all.

    {"ready": true, "status": "degraded",
     "checks": {"index": "ok", "redis": "down", "chroma": "ok", "llm": "offline"},
     "notes": {"redis": "answering on in-process state until Redis returns"}}

A check is `ok`, `down` (configured but failing), `disabled` (not configured), `empty` (the index has no
chunks), or `offline` (no LLM configured: the offline stages answer). `status` is `ok`, `degraded` (something
configured is down but the bot still answers: lexical search without Chroma, in-process state without Redis,
offline stages without the LLM) or `unavailable`; only `unavailable` (no index, or state that cannot be kept)
makes `/readyz` answer 503.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)

CheckState = Literal["ok", "down", "disabled", "empty", "offline"]


class _Corpus(Protocol):
    chunks: object

    def refresh(self) -> object: ...


class _Dense(Protocol):
    def count(self) -> int: ...


class _Store(Protocol):
    async def ping(self) -> bool: ...


class _Llm(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def available(self) -> bool: ...


class ReadinessReport(BaseModel):
    """The `/readyz` body."""

    model_config = ConfigDict(frozen=True)

    ready: bool
    status: Literal["ok", "degraded", "unavailable"]
    checks: dict[str, CheckState]
    notes: dict[str, str] = {}


async def check_readiness(
    *, corpus: _Corpus, dense: _Dense | None, store: _Store, redis_configured: bool, llm: _Llm | None
) -> ReadinessReport:
    """Probe each dependency once (the index file, Chroma, the state store, the LLM's circuit breaker)."""
    checks: dict[str, CheckState] = {}
    notes: dict[str, str] = {}
    try:
        await asyncio.to_thread(corpus.refresh)
        checks["index"] = "ok" if corpus.chunks else "empty"
        if not corpus.chunks:
            notes["index"] = "no documents indexed: run `regbot ingest`"
    except Exception as exc:  # the index file is unreadable
        checks["index"] = "down"
        notes["index"] = f"unreadable: {type(exc).__name__}"
    store_usable = True
    try:
        reachable = await store.ping()
        fallen_back = bool(getattr(store, "degraded", False))
    except Exception as exc:
        log.warning("readiness: the state store failed its ping: %s", type(exc).__name__)
        reachable, fallen_back = False, False
    if not redis_configured:
        checks["redis"] = "disabled"
        notes["redis"] = "REDIS_URL is not set: state is in-process (one replica)"
    elif fallen_back:
        checks["redis"] = "down"
        notes["redis"] = "answering on in-process state until Redis returns"
    elif reachable:
        checks["redis"] = "ok"
    else:
        checks["redis"] = "down"
        store_usable = False
    if dense is None:
        checks["chroma"] = "disabled"
        notes["chroma"] = "dense retrieval is off: lexical search only"
    else:
        try:
            await asyncio.to_thread(dense.count)
            checks["chroma"] = "ok"
        except Exception as exc:
            checks["chroma"] = "down"
            notes["chroma"] = f"{type(exc).__name__}: lexical search only"
    if llm is None:
        checks["llm"] = "offline"
    elif llm.available:
        checks["llm"] = "ok"
    else:
        checks["llm"] = "down"
        notes["llm"] = f"{llm.name} is unavailable (circuit open): offline stages answer"
    ready = checks["index"] == "ok" and store_usable
    configured_down = any(state == "down" for state in checks.values())
    status = "unavailable" if not ready else ("degraded" if configured_down else "ok")
    return ReadinessReport(ready=ready, status=status, checks=checks, notes=notes)


__all__ = ["CheckState", "ReadinessReport", "check_readiness"]
