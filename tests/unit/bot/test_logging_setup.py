"""JSON log lines: fields, extras, exceptions, and what happens to message text."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator

import pytest

from bot.server.logging_setup import JsonLogFormatter, configure_logging

QUESTION = "육아휴직 중에 이직해도 되나요?"


def record(message: str = "turn %s answered", *args: object, level: int = logging.INFO, name: str = "bot.service",
           **extra: object) -> logging.LogRecord:
    return logging.getLogger(name).makeRecord(name, level, __file__, 1, message, args or ("t1",), None, extra=extra)


def line(formatter: JsonLogFormatter, made: logging.LogRecord) -> dict:
    return json.loads(formatter.format(made))


class TestJsonLogFormatter:
    def test_line_names_time_level_logger_and_message(self):
        entry = line(JsonLogFormatter(), record())

        assert entry["level"] == "INFO"
        assert entry["logger"] == "bot.service"
        assert entry["message"] == "turn t1 answered"
        assert entry["ts"].endswith("+00:00")

    def test_extra_fields_become_json_fields(self):
        entry = line(JsonLogFormatter(), record(turn_id="t1", route="search", llm_calls=2,
                                                timings_ms={"retrieve": 12.5}))

        assert (entry["turn_id"], entry["route"], entry["llm_calls"]) == ("t1", "search", 2)
        assert entry["timings_ms"] == {"retrieve": 12.5}

    def test_question_and_answer_are_replaced_by_their_length_by_default(self):
        text = JsonLogFormatter().format(record(question=QUESTION, answer="네, 됩니다."))

        assert QUESTION not in text
        entry = json.loads(text)
        assert entry["question_chars"] == len(QUESTION)
        assert "question" not in entry and "answer" not in entry

    def test_content_is_logged_when_allowed(self):
        entry = line(JsonLogFormatter(log_content=True), record(question=QUESTION))

        assert entry["question"] == QUESTION

    def test_korean_stays_readable(self):
        text = JsonLogFormatter().format(record("문서 %s 색인 완료", "취업규칙"))

        assert "취업규칙" in text

    def test_exception_carries_its_traceback(self):
        try:
            raise ValueError("index file unreadable")
        except ValueError:
            made = logging.getLogger("bot").makeRecord("bot", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
        entry = line(JsonLogFormatter(), made)

        assert "ValueError: index file unreadable" in entry["exception"]


@pytest.fixture
def root_logging() -> Iterator[None]:
    """configure_logging replaces the root handlers; put pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


class TestConfigureLogging:
    def test_library_debug_dumps_are_dropped_without_log_content(self, root_logging):
        out = io.StringIO()
        configure_logging(log_content=False, level=logging.DEBUG, stream=out)

        logging.getLogger("slack_sdk.web.async_base_client").debug("Sending a request - body: %s", QUESTION)
        logging.getLogger("bot.service").debug("turn t1 queued")

        lines = [json.loads(text) for text in out.getvalue().splitlines()]
        assert [entry["message"] for entry in lines] == ["turn t1 queued"]
        assert QUESTION not in out.getvalue()

    def test_library_debug_is_kept_with_log_content(self, root_logging):
        out = io.StringIO()
        configure_logging(log_content=True, level=logging.DEBUG, stream=out)

        logging.getLogger("slack_sdk.web.async_base_client").debug("Sending a request - body: %s", QUESTION)

        assert json.loads(out.getvalue())["message"] == f"Sending a request - body: {QUESTION}"

    def test_warnings_of_libraries_always_show(self, root_logging):
        out = io.StringIO()
        configure_logging(stream=out)

        logging.getLogger("slack_bolt.App").warning("rate limited")
        logging.getLogger("bot.server").debug("not at INFO")

        assert [json.loads(text)["message"] for text in out.getvalue().splitlines()] == ["rate limited"]


class TestLogSize:
    def test_a_library_line_embedding_a_megabyte_body_stays_under_a_kilobyte(self, root_logging):
        out = io.StringIO()
        configure_logging(stream=out)

        bolt = logging.getLogger("slack_bolt.AsyncApp")
        bolt.info("Invalid request signature detected (body: %s)", QUESTION * 40_000)

        assert len(out.getvalue().encode()) < 1024

    def test_content_allowed_is_still_truncated(self, root_logging):
        out = io.StringIO()
        configure_logging(log_content=True, stream=out)

        logging.getLogger("bot.service").info("question: %s", QUESTION * 40_000)

        entry = json.loads(out.getvalue())
        assert entry["message"].startswith(f"question: {QUESTION}")
        assert len(entry["message"]) <= 4000
        assert entry["message_truncated_chars"] == len(f"question: {QUESTION * 40_000}") - len(entry["message"])

    def test_long_content_fields_are_truncated_when_allowed(self, root_logging):
        out = io.StringIO()
        configure_logging(log_content=True, stream=out)

        logging.getLogger("bot.service").info("turn answered", extra={"question": QUESTION * 40_000})

        assert len(json.loads(out.getvalue())["question"]) <= 4000
