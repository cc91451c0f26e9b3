"""What `regbot serve` says when it starts: where it listens, which adapters are on and why, the index, the LLM,
state, Chroma and /admin. The readable block always goes to stderr; off a terminal one JSON log line follows it
(log collectors read that)."""

from __future__ import annotations

import logging
import sys
from dataclasses import asdict, dataclass
from typing import TextIO

from bot.config import Settings
from rag.llm.base import redact_url

log = logging.getLogger("bot.server.startup")


@dataclass(frozen=True)
class Switch:
    """An adapter or feature: whether it is on, and the setting that decides it."""

    on: bool
    why: str


def slack_switch(settings: Settings) -> Switch:
    if not settings.slack_bot_token:
        return Switch(False, "SLACK_BOT_TOKEN is not set")
    if settings.slack_app_token:
        return Switch(True, "Socket Mode (SLACK_APP_TOKEN)")
    if settings.slack_signing_secret:
        return Switch(True, "HTTP events at /slack/events")
    return Switch(False, "SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode) is not set")


def teams_switch(settings: Settings) -> Switch:
    if settings.microsoft_app_id:
        return Switch(True, "/api/messages, authenticated (MICROSOFT_APP_ID)")
    if settings.teams_allow_anonymous:
        return Switch(True, "/api/messages, anonymous (TEAMS_ALLOW_ANONYMOUS, local testing only)")
    return Switch(False, "MICROSOFT_APP_ID is not set")


def playground_switch(settings: Settings) -> Switch:
    if settings.playground:
        return Switch(True, "at / (REGBOT_PLAYGROUND=true)")
    return Switch(False, "REGBOT_PLAYGROUND is not true")


def admin_switch(settings: Settings) -> Switch:
    if settings.admin_token:
        return Switch(True, "at /admin with `Authorization: Bearer` (REGBOT_ADMIN_TOKEN)")
    return Switch(False, "REGBOT_ADMIN_TOKEN is not set")


@dataclass(frozen=True)
class StartupSummary:
    """Everything the start-up block reports."""

    listen: str
    slack: Switch
    teams: Switch
    playground: Switch
    admin: Switch
    index_chunks: int
    index_documents: int
    index_version: int
    data_dir: str
    llm: str
    state: str
    chroma: str
    scopes: str = ""

    def lines(self) -> list[str]:
        def switch(name: str, value: Switch) -> str:
            return f"  {name:<11}{'on ' if value.on else 'off'}  {value.why}"

        index = (f"{self.index_chunks} chunks from {self.index_documents} documents (version {self.index_version})"
                 if self.index_chunks else "EMPTY: run `regbot ingest FOLDER` (/readyz stays 503 until then)")
        return [
            f"regbot serve — listening on {self.listen}",
            switch("Slack", self.slack),
            switch("Teams", self.teams),
            switch("playground", self.playground),
            switch("/admin", self.admin),
            f"  {'index':<11}{index}",
            f"  {'data dir':<11}{self.data_dir}",
            f"  {'LLM':<11}{self.llm}",
            f"  {'state':<11}{self.state}",
            f"  {'Chroma':<11}{self.chroma}",
            *([f"  {'scopes':<11}{self.scopes}"] if self.scopes else []),
        ]

    def as_log_fields(self) -> dict:
        return asdict(self)


def summarize(settings: Settings, components) -> StartupSummary:
    """The summary of a built runtime (`components` from bot.app.build_components)."""
    corpus = components.corpus
    chunks = list(corpus.chunks)
    if settings.llm == "anthropic":
        llm = f"anthropic ({settings.anthropic_fast_model} / {settings.anthropic_strong_model})"
    elif settings.llm == "openai":
        llm = f"openai-compatible {redact_url(settings.openai_base_url)} ({settings.openai_model})"
    else:
        llm = "offline (extractive answers, no LLM)"
    if settings.redis_url:
        state = f"Redis {redact_url(settings.redis_url)} (in-process while it is down)"
    else:
        state = "in-process (one replica; set REDIS_URL to share state)"
    if components.dense is None:
        chroma = "disabled (unreachable at start-up): lexical retrieval only"
    elif settings.chroma_url:
        chroma = f"server {redact_url(settings.chroma_url)}"
    else:
        chroma = f"embedded in {settings.data_dir / 'chroma'}"
    return StartupSummary(
        listen=f"http://{settings.host}:{settings.port}",
        slack=slack_switch(settings), teams=teams_switch(settings), playground=playground_switch(settings),
        admin=admin_switch(settings),
        index_chunks=len(chunks), index_documents=len({c.doc for c in chunks}),
        index_version=components.store.version(), data_dir=str(settings.data_dir),
        llm=llm, state=state, chroma=chroma,
        # Said here rather than as a warning: with no scopes file every place may search every collection
        # (DESIGN.md §3, Scopes), which is right for one team and worth a line for everyone else.
        scopes=(f"{settings.scopes_file}" if settings.scopes_file
                else "none (REGBOT_SCOPES_FILE unset): every place may search every collection"),
    )


def announce(summary: StartupSummary, *, stream: TextIO | None = None) -> None:
    """The block on stderr, always (a person reads it first); off a terminal also one `regbot serve starting` log
    line (JSON under `configure_logging`) for log collectors."""
    stream = stream if stream is not None else sys.stderr
    stream.write("\n".join(summary.lines()) + "\n")
    stream.flush()
    if not stream.isatty():
        log.info("regbot serve starting", extra=summary.as_log_fields())


__all__ = ["StartupSummary", "Switch", "admin_switch", "announce", "playground_switch", "slack_switch", "summarize",
           "teams_switch"]
