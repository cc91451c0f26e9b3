"""Helpers shared by the providers: retry-after parsing and JSON output checks."""

from __future__ import annotations

import email.utils
import time

import pytest

from rag.llm import LlmOutputInvalid
from rag.llm.base import is_retryable_status, parse_retry_after, require_json_object

SCHEMA = {"type": "object", "required": ["route", "reason"]}


class TestParseRetryAfter:
    def test_milliseconds_header_wins_over_seconds(self):
        assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5

    def test_seconds_header(self):
        assert parse_retry_after({"retry-after": "3"}) == 3.0

    def test_http_date_header_becomes_seconds_from_now(self):
        in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)

        assert 55 <= parse_retry_after({"retry-after": in_a_minute}) <= 60

    def test_absent_or_garbage_header_is_none(self):
        assert parse_retry_after({}) is None
        assert parse_retry_after({"retry-after": "soon"}) is None


class TestRequireJsonObject:
    def test_accepts_a_fenced_json_string(self):
        text = '```json\n{"route": "search", "reason": "규정 질문"}\n```'

        assert require_json_object(text, SCHEMA) == {"route": "search", "reason": "규정 질문"}

    def test_names_the_missing_required_keys(self):
        with pytest.raises(LlmOutputInvalid, match="required keys: reason"):
            require_json_object({"route": "search"}, SCHEMA)

    def test_rejects_a_list(self):
        with pytest.raises(LlmOutputInvalid, match="list, not a JSON object"):
            require_json_object('["search"]', SCHEMA)


def test_rate_limits_overload_and_server_errors_are_retryable_but_client_errors_are_not():
    assert [is_retryable_status(code) for code in (429, 500, 503, 529, 408)] == [True] * 5
    assert [is_retryable_status(code) for code in (400, 401, 403, 404, 422)] == [False] * 5
