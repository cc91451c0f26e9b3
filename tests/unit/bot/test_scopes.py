from __future__ import annotations

from types import SimpleNamespace

import pytest

from adapters.base import ScopeRequest
from bot.service.scopes import NOTHING, ScopeResolver
from rag.errors import ConfigError
from rag.models import Scope
from testkit import make_settings

SCOPES_YAML = """
defaults:
  collections: [company]
direct:
  collections: [company, hr]
slack:
  - workspace: T01
    collections: [company, hr]
  - channel: C-FIN
    collections: [finance]
  - workspace: T01
    channel: C-EXEC
    collections: [board]
  - workspace: T01
    direct: true
    collections: [hr]
teams:
  - tenant: tenant-1
    collections: [company]
  - tenant: tenant-1
    team: team-ops
    collections: [ops]
  - tenant: tenant-1
    team: team-ops
    channel: chan-safety
    collections: [safety]
"""


@pytest.fixture
def resolver(tmp_path) -> ScopeResolver:
    path = tmp_path / "scopes.yaml"
    path.write_text(SCOPES_YAML, encoding="utf-8")
    return ScopeResolver.from_file(path)


def slack(**fields: object) -> ScopeRequest:
    return ScopeRequest(platform="slack", **fields)


def teams(**fields: object) -> ScopeRequest:
    return ScopeRequest(platform="teams", **fields)


class TestScopeResolver:
    def test_without_a_file_everything_is_allowed(self):
        assert ScopeResolver.from_file(None).resolve(slack(workspace="T01")) == Scope()

    def test_workspace_rule_applies_to_its_channels(self, resolver):
        assert resolver.resolve(slack(workspace="T01", channel="C-GENERAL")) == Scope(collections=("company", "hr"))

    def test_channel_rule_beats_the_workspace_rule(self, resolver):
        assert resolver.resolve(slack(workspace="T01", channel="C-FIN")).collections == ("finance",)
        assert resolver.resolve(slack(workspace="T01", channel="C-EXEC")) == Scope(collections=("board",))

    def test_unknown_workspace_gets_the_defaults(self, resolver):
        assert resolver.resolve(slack(workspace="T99", channel="C1")) == Scope(collections=("company",))

    def test_dm_rule_wins_over_the_dm_default(self, resolver):
        assert resolver.resolve(slack(workspace="T01", is_direct=True)) == Scope(collections=("hr",))
        assert resolver.resolve(teams(workspace="tenant-1", is_direct=True)).collections == ("company", "hr")

    def test_teams_channel_beats_team_beats_tenant(self, resolver):
        assert resolver.resolve(teams(workspace="tenant-1", team="team-ops", channel="chan-safety")).collections == (
            "safety",
        )
        assert resolver.resolve(teams(workspace="tenant-1", team="team-ops", channel="other")).collections == ("ops",)
        assert resolver.resolve(teams(workspace="tenant-1", team="team-x")).collections == ("company",)

    def test_web_requests_get_the_defaults(self, resolver):
        assert resolver.resolve(ScopeRequest(platform="web")).collections == ("company",)
        assert resolver.resolve(ScopeRequest(platform="web", is_direct=True)).collections == ("company", "hr")


def resolver_of(tmp_path, text: str) -> ScopeResolver:
    path = tmp_path / "scopes.yaml"
    path.write_text(text, encoding="utf-8")
    return ScopeResolver.from_file(path)


class TestScopesFailClosed:
    def test_an_empty_collections_list_allows_nothing(self, tmp_path):
        resolver = resolver_of(tmp_path, "defaults:\n  collections: []\n")

        assert resolver.resolve(ScopeRequest(platform="web", is_direct=True)) == NOTHING
        assert resolver.resolve(slack(workspace="T01")) == NOTHING

    def test_an_empty_rule_beats_the_defaults(self, tmp_path):
        resolver = resolver_of(tmp_path, "defaults:\n  collections: [company]\nslack:\n"
                                         "  - channel: C-GUESTS\n    collections: []\n")

        assert resolver.resolve(slack(channel="C-GUESTS")) == NOTHING
        assert resolver.resolve(slack(channel="C-OTHER")).collections == ("company",)

    def test_a_file_without_defaults_gives_an_unmatched_place_nothing(self, tmp_path):
        resolver = resolver_of(tmp_path, "slack:\n  - workspace: T01\n    collections: [hr]\n")

        assert resolver.resolve(slack(workspace="T01")).collections == ("hr",)
        assert resolver.resolve(slack(workspace="T02")) == NOTHING
        assert resolver.resolve(ScopeRequest(platform="web", is_direct=True)) == NOTHING
        assert resolver.resolve(teams(workspace="tenant-1")) == NOTHING

    def test_an_empty_file_allows_nothing(self, tmp_path):
        assert resolver_of(tmp_path, "").resolve(ScopeRequest(platform="web")) == NOTHING

    def test_without_a_file_start_up_says_everything_is_visible(self, tmp_path):
        from bot.server.startup import summarize

        assert ScopeResolver.from_file(None).resolve(ScopeRequest(platform="web")) != NOTHING
        components = SimpleNamespace(corpus=SimpleNamespace(chunks=[]), dense=None,
                                     store=SimpleNamespace(version=lambda: 0))
        block = summarize(make_settings(tmp_path), components).lines()
        assert "  scopes     none (REGBOT_SCOPES_FILE unset): every place may search every collection" in block

    def test_audience_is_refused_as_it_restricts_nothing(self, tmp_path):
        with pytest.raises(ConfigError, match="audience"):
            resolver_of(tmp_path, "defaults:\n  collections: [company]\n  audience: employee\n")

    def test_missing_file_is_a_config_error_naming_it(self, tmp_path):
        with pytest.raises(ConfigError, match=r"nowhere\.yaml"):
            ScopeResolver.from_file(tmp_path / "nowhere.yaml")

    def test_unknown_key_is_a_config_error(self, tmp_path):
        path = tmp_path / "scopes.yaml"
        path.write_text("slack:\n  - workspace: T01\n    colections: [hr]\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="colections"):
            ScopeResolver.from_file(path)
