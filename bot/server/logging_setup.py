"""Structured logs for `regbot serve`: one JSON object a line on stderr, message text left out by default.

    configure_logging(log_content=settings.log_content, level=logging.INFO)

Each line carries `ts` (UTC, ISO 8601), `level`, `logger`, `message`, any `extra={...}` fields the call
passed, and `exception` with the traceback when there is one. What people wrote and what the bot answered
is personal data: unless REGBOT_LOG_CONTENT=true, fields named in `CONTENT_FIELDS` are replaced by their
length (`question` → `question_chars`), and the DEBUG output of the libraries that dump request bodies
(Slack, Teams, LLM and HTTP clients) is dropped. Every message is cut to `MAX_MESSAGE_CHARS` (content fields,
when allowed, to `MAX_CONTENT_CHARS`), so no line can carry a request body whole: a library that formats one
into a message (bolt does, for a bad signature) adds a few hundred bytes, not megabytes. Requests themselves
are logged by `bot.server.http_guard` (method, path, status, sizes, request id), not by aiohttp's access log.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

# `extra` fields that hold what a person wrote or what the bot answered.
CONTENT_FIELDS = frozenset({"question", "answer", "text", "content", "history", "quote"})

# Their DEBUG records print request and response bodies, i.e. questions and answers.
PAYLOAD_LOGGERS = ("slack_bolt", "slack_sdk", "microsoft_agents", "anthropic", "openai", "httpx", "httpcore",
                   "aiohttp.client")

# A message longer than this is cut (and says how much was cut); with REGBOT_LOG_CONTENT, the longer limit.
MAX_MESSAGE_CHARS = 300
MAX_CONTENT_CHARS = 4000
# Tracebacks keep their end (the exception and the innermost frames).
MAX_EXCEPTION_CHARS = 8000

# Attributes every LogRecord has; anything else on a record came from `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonLogFormatter(logging.Formatter):
    """Formats a record as one JSON line; content fields become their length unless `log_content`."""

    def __init__(self, *, log_content: bool = False) -> None:
        super().__init__()
        self._log_content = log_content

    def format(self, record: logging.LogRecord) -> str:
        limit = MAX_CONTENT_CHARS if self._log_content else MAX_MESSAGE_CHARS
        message = record.getMessage()
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": message[:limit],
        }
        if len(message) > limit:
            entry["message_truncated_chars"] = len(message) - limit
        for key, value in vars(record).items():
            if key in _RECORD_ATTRIBUTES or key.startswith("_") or key in entry:
                continue
            if key in CONTENT_FIELDS:
                if not self._log_content:
                    entry[f"{key}_chars"] = len(value) if isinstance(value, str | list | tuple) else None
                    continue
                if isinstance(value, str):
                    value = value[:MAX_CONTENT_CHARS]
            entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)[-MAX_EXCEPTION_CHARS:]
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class PayloadDebugFilter(logging.Filter):
    """Drops DEBUG records of `PAYLOAD_LOGGERS`, whose messages embed request bodies."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO:
            return True
        return not any(record.name == name or record.name.startswith(name + ".") for name in PAYLOAD_LOGGERS)


def configure_logging(*, log_content: bool = False, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Replace the root handlers with one JSON handler; call once at start-up (`regbot serve`)."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonLogFormatter(log_content=log_content))
    if not log_content:
        handler.addFilter(PayloadDebugFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level)
    # bot.server.http_guard writes one line per request (without the query string); aiohttp's access log would repeat
    # it, with the query.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # In anonymous (local) Teams mode the SDK warns about the missing app id on every turn.
    logging.getLogger("microsoft_agents.hosting.core.connector.client.user_token_client").setLevel(logging.ERROR)


__all__ = [
    "CONTENT_FIELDS",
    "MAX_CONTENT_CHARS",
    "MAX_MESSAGE_CHARS",
    "PAYLOAD_LOGGERS",
    "JsonLogFormatter",
    "PayloadDebugFilter",
    "configure_logging",
]
