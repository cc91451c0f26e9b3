"""A stranger's JSON body, parsed with a nesting limit: `'[' * 5000` is a 400, not a `RecursionError` and a 500.

    data = parse_json_body(raw)        # raises JsonBodyError (a ValueError) for anything unreadable

Python's `json` recurses once per nesting level, so a body of a few kilobytes can exhaust the interpreter's
stack. The depth is therefore measured first, in one linear pass over the brackets outside strings, and a body
nested deeper than `max_depth` is refused before `json.loads` sees it.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Slack, Teams and playground bodies nest about ten levels (an Adaptive Card's values included); 64 leaves room.
MAX_JSON_DEPTH = 64
# A JSON string (escapes included), removed before brackets are counted. An unclosed one runs to the end of the
# text: possessive, so the scan never restarts inside it (that was quadratic on `"\\"\\"\\…`).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonBodyError(ValueError):
    """The body is not UTF-8 JSON, or is nested deeper than the limit."""


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text` (brackets inside strings do not count)."""
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text))
    depth = deepest = 0
    for bracket in brackets:
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json_body(raw: bytes | str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`raw` parsed as JSON; JsonBodyError when it is not UTF-8, not JSON or nested over `max_depth`."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise JsonBodyError("the body is not UTF-8") from None
    if json_depth(text) > max_depth:
        raise JsonBodyError(f"the body nests deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise JsonBodyError("the body is not JSON") from None


__all__ = ["MAX_JSON_DEPTH", "JsonBodyError", "json_depth", "parse_json_body"]
