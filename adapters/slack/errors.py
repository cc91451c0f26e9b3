"""Reading Slack Web API failures: the error code and whether Slack asked us to slow down."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError


def slack_error_code(error: SlackApiError) -> str:
    """`ratelimited`, `not_in_channel`, … or `http_<status>` when the body is not Slack's JSON."""
    data = error.response.data
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"http_{error.response.status_code}"


def is_rate_limited(error: SlackApiError) -> bool:
    return error.response.status_code == 429 or slack_error_code(error) == "ratelimited"


__all__ = ["is_rate_limited", "slack_error_code"]
