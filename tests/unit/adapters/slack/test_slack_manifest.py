"""The app manifests agree with what the adapter serves and with Slack's scope rules."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from adapters.slack.app import DEFAULT_COMMANDS, EVENTS_PATH

MANIFESTS = Path(__file__).resolve().parents[4] / "manifests" / "slack"
# Slack rejects a manifest that subscribes to an event without the scope that grants it.
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.im": "im:history",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "assistant_thread_started": "assistant:write",
    "assistant_thread_context_changed": "assistant:write",
    "app_home_opened": None,
}


def load(name: str) -> dict:
    return yaml.safe_load((MANIFESTS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["manifest.yml", "manifest.socket-mode.yml"])
class TestManifests:
    def test_every_event_has_its_scope(self, name: str):
        manifest = load(name)
        scopes = set(manifest["oauth_config"]["scopes"]["bot"])

        for event in manifest["settings"]["event_subscriptions"]["bot_events"]:
            assert EVENT_SCOPES[event] is None or EVENT_SCOPES[event] in scopes, event

    def test_commands_and_buttons_are_enabled(self, name: str):
        manifest = load(name)

        assert [c["command"] for c in manifest["features"]["slash_commands"]] == list(DEFAULT_COMMANDS)
        assert "commands" in manifest["oauth_config"]["scopes"]["bot"]
        assert manifest["settings"]["interactivity"]["is_enabled"] is True


def test_http_manifest_points_every_url_at_the_events_route():
    manifest = load("manifest.yml")
    urls = [
        manifest["settings"]["event_subscriptions"]["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
        *(c["url"] for c in manifest["features"]["slash_commands"]),
    ]

    assert all(url.endswith(EVENTS_PATH) for url in urls)
    assert manifest["settings"]["socket_mode_enabled"] is False


def test_socket_mode_manifest_has_no_request_urls():
    manifest = load("manifest.socket-mode.yml")

    assert manifest["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in manifest["settings"]["event_subscriptions"]
    assert all("url" not in c for c in manifest["features"]["slash_commands"])
