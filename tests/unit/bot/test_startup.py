"""`regbot serve`'s start-up block: adapters on/off with the setting that decides, secrets kept out, a human block
on a terminal and one JSON log line otherwise."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.config import Settings
from bot.server.logging_setup import configure_logging
from bot.server.startup import (
    StartupSummary,
    Switch,
    announce,
    playground_switch,
    redact_url,
    slack_switch,
    teams_switch,
)


def settings(**env) -> Settings:
    return Settings(REGBOT_LLM="offline", **env)


class TestSwitches:
    def test_slack_is_off_without_a_bot_token_and_says_so(self):
        assert slack_switch(settings()) == Switch(False, "SLACK_BOT_TOKEN is not set")

    def test_slack_with_a_token_but_no_secret_is_off_and_names_both_ways_to_turn_it_on(self):
        switch = slack_switch(settings(SLACK_BOT_TOKEN="xoxb-1"))
        assert not switch.on
        assert "SLACK_SIGNING_SECRET" in switch.why and "SLACK_APP_TOKEN" in switch.why

    @pytest.mark.parametrize(("env", "mode"), [({"SLACK_SIGNING_SECRET": "s"}, "/slack/events"),
                                               ({"SLACK_APP_TOKEN": "xapp-1"}, "Socket Mode")])
    def test_slack_on_names_its_mode(self, env, mode):
        switch = slack_switch(settings(SLACK_BOT_TOKEN="xoxb-1", **env))
        assert switch.on and mode in switch.why

    def test_teams_anonymous_is_marked_as_local_testing(self):
        switch = teams_switch(settings(TEAMS_ALLOW_ANONYMOUS="true"))
        assert switch.on and "anonymous" in switch.why

    def test_teams_and_playground_off_name_their_setting(self):
        assert teams_switch(settings()).why == "MICROSOFT_APP_ID is not set"
        assert playground_switch(settings()).why == "REGBOT_PLAYGROUND is not true"


def test_redact_url_hides_the_password_only():
    assert redact_url("redis://:s3cret@redis:6379/0") == "redis://:***@redis:6379/0"
    assert redact_url("redis://user:s3cret@redis/0") == "redis://user:***@redis/0"
    assert redact_url("http://chroma:8000") == "http://chroma:8000"


SUMMARY = StartupSummary(
    listen="http://0.0.0.0:3978", slack=Switch(True, "HTTP events at /slack/events"),
    teams=Switch(False, "MICROSOFT_APP_ID is not set"), playground=Switch(False, "REGBOT_PLAYGROUND is not true"),
    admin=Switch(False, "REGBOT_ADMIN_TOKEN is not set"),
    index_chunks=1200, index_documents=12, index_version=7, data_dir="/data", llm="offline (extractive)",
    state="Redis redis://:***@redis:6379/0", chroma="server http://chroma:8000",
)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_block_names_every_part():
    stream = FakeTerminal()
    announce(SUMMARY, stream=stream)
    text = stream.getvalue()
    assert text.splitlines()[0] == "regbot serve — listening on http://0.0.0.0:3978"
    assert "  Teams      off  MICROSOFT_APP_ID is not set" in text
    assert "1200 chunks from 12 documents (version 7)" in text
    assert "  /admin     off  REGBOT_ADMIN_TOKEN is not set" in text
    for part in ("Slack", "playground", "data dir", "LLM", "state", "Chroma"):
        assert f"\n  {part}" in text


def test_an_empty_index_tells_to_ingest():
    empty = StartupSummary(**{**SUMMARY.__dict__, "index_chunks": 0, "index_documents": 0})
    assert any("run `regbot ingest FOLDER`" in line for line in empty.lines())


def test_admin_is_on_with_a_token():
    from bot.server.startup import admin_switch

    assert admin_switch(settings(REGBOT_ADMIN_TOKEN="t")).on
    assert not admin_switch(settings()).on


def test_off_a_terminal_it_is_the_readable_block_and_one_json_log_line():
    logs = io.StringIO()
    stderr = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging(level=logging.INFO, stream=logs)
    try:
        announce(SUMMARY, stream=stderr)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert stderr.getvalue().splitlines() == SUMMARY.lines()
    lines = logs.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["message"] == "regbot serve starting"
    assert entry["listen"] == "http://0.0.0.0:3978"
    assert entry["slack"] == {"on": True, "why": "HTTP events at /slack/events"}
    assert entry["index_chunks"] == 1200 and entry["chroma"] == "server http://chroma:8000"
