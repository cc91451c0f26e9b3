from __future__ import annotations

import pytest

from adapters.base import ScopeRequest
from bot.scopes import ScopeResolver
from rag.errors import ConfigError
from rag.models import Scope

SCOPES_YAML = """
defaults:
  collections: [company]
  audience: employee
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
    audience: executive
  - workspace: T01
    direct: true
    audience: hr-self
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

    def test_workspace_rule_keeps_the_default_audience(self, resolver):
        assert resolver.resolve(slack(workspace="T01", channel="C-GENERAL")) == Scope(
            collections=("company", "hr"), audience="employee"
        )

    def test_channel_rule_beats_the_workspace_rule(self, resolver):
        assert resolver.resolve(slack(workspace="T01", channel="C-FIN")).collections == ("finance",)
        assert resolver.resolve(slack(workspace="T01", channel="C-EXEC")) == Scope(
            collections=("board",), audience="executive"
        )

    def test_unknown_workspace_gets_the_defaults(self, resolver):
        assert resolver.resolve(slack(workspace="T99", channel="C1")) == Scope(
            collections=("company",), audience="employee"
        )

    def test_dm_rule_is_filled_in_from_the_dm_default(self, resolver):
        assert resolver.resolve(slack(workspace="T01", is_direct=True)) == Scope(
            collections=("company", "hr"), audience="hr-self"
        )
        assert resolver.resolve(teams(workspace="tenant-1", is_direct=True)).collections == ("company", "hr")

    def test_teams_channel_beats_team_beats_tenant(self, resolver):
        assert resolver.resolve(teams(workspace="tenant-1", team="team-ops", channel="chan-safety")).collections == (
            "safety",
        )
        assert resolver.resolve(teams(workspace="tenant-1", team="team-ops", channel="other")).collections == ("ops",)
        assert resolver.resolve(teams(workspace="tenant-1", team="team-x")).collections == ("company",)

    def test_web_requests_get_the_defaults(self, resolver):
        assert resolver.resolve(ScopeRequest(platform="web")).collections == ("company",)

    def test_missing_file_is_a_config_error_naming_it(self, tmp_path):
        with pytest.raises(ConfigError, match=r"nowhere\.yaml"):
            ScopeResolver.from_file(tmp_path / "nowhere.yaml")

    def test_unknown_key_is_a_config_error(self, tmp_path):
        path = tmp_path / "scopes.yaml"
        path.write_text("slack:\n  - workspace: T01\n    colections: [hr]\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="colections"):
            ScopeResolver.from_file(path)
