"""Which collections a Slack, Teams or playground place may search, from a YAML file (`REGBOT_SCOPES_FILE`).

```yaml
defaults:             # everywhere no rule matches (omit: an unmatched place may search nothing)
  collections: [company]
direct:               # direct messages (Slack DM, Teams personal chat, the playground) with no matching rule
  collections: [company, hr]
slack:
  - workspace: T0001                  # the whole workspace
    collections: [company, hr]
  - workspace: T0001
    channel: C0FINANCE                # one channel: more specific, so it wins
    collections: [finance]
  - workspace: T0001
    channel: C0VISITORS
    collections: []                   # an empty list: this channel may search nothing
teams:
  - tenant: 0b1c-tenant
    team: "19:team@thread.tacv2"
    channel: "19:channel@thread.tacv2"
    collections: [finance]
  - tenant: 0b1c-tenant
    direct: true                      # personal chats in this tenant
    collections: [company]
```
A rule matches when every place field it names equals the request's; a channel outweighs a team, which
outweighs a workspace or tenant, and the first of equally specific rules wins. A rule that leaves out
`collections` takes it from `direct` (in a DM) or `defaults`; where none of them names collections, the place
may search nothing (the file fails closed). Teams places are read from the validated token's tenant, not the
activity body. Without a file (`REGBOT_SCOPES_FILE` unset) every place may search everything, and `regbot serve`
says so at start-up. (An `audience` key is no longer accepted: it never restricted anything.)
"""

from __future__ import annotations

import logging
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from adapters.base import ScopeRequest
from rag.errors import ConfigError
from rag.models import Scope

logger = logging.getLogger(__name__)

# The scope of a place that may search nothing: a collection name that ingest cannot create (`--collection`
# takes a word), so every search, lookup and neighbour read filters every chunk out.
NOTHING = Scope(collections=("\x00nothing",))


class _ScopeValues(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    collections: tuple[str, ...] | None = None


class _SlackRule(_ScopeValues):
    workspace: str = ""
    channel: str = ""
    direct: bool = False

    def specificity(self, request: ScopeRequest) -> int | None:
        """How specific the rule is for this request, or None when it does not match."""
        if self.direct != request.is_direct:
            return None
        if self.workspace and self.workspace != request.workspace:
            return None
        if self.channel and self.channel != request.channel:
            return None
        return (4 if self.channel else 0) + (1 if self.workspace else 0)


class _TeamsRule(_ScopeValues):
    tenant: str = ""
    team: str = ""
    channel: str = ""
    direct: bool = False

    def specificity(self, request: ScopeRequest) -> int | None:
        if self.direct != request.is_direct:
            return None
        if self.tenant and self.tenant != request.workspace:
            return None
        if self.team and self.team != request.team:
            return None
        if self.channel and self.channel != request.channel:
            return None
        return (4 if self.channel else 0) + (2 if self.team else 0) + (1 if self.tenant else 0)


class ScopeRules(BaseModel):
    """The parsed scopes file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    defaults: _ScopeValues | None = None
    direct: _ScopeValues | None = None
    slack: tuple[_SlackRule, ...] = ()
    teams: tuple[_TeamsRule, ...] = ()


class ScopeResolver:
    """Resolves a place (platform, workspace/tenant, team, channel, DM) to the Scope it may search."""

    def __init__(self, rules: ScopeRules | None = None) -> None:
        self._rules = rules

    @classmethod
    def from_file(cls, path: Path | None) -> ScopeResolver:
        """Load `path`; None means no scopes file, so everything is allowed. A bad file raises ConfigError."""
        if path is None:
            logger.info("no scopes file (REGBOT_SCOPES_FILE is unset): every place may search every collection")
            return cls(None)
        try:
            raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"REGBOT_SCOPES_FILE points to {path}, which does not exist") from exc
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the scopes file {path}: {exc}") from exc
        try:
            return cls(ScopeRules.model_validate(raw or {}))
        except ValidationError as exc:
            raise ConfigError(f"the scopes file {path} is invalid: {exc}") from exc

    def resolve(self, request: ScopeRequest) -> Scope:
        """The most specific matching rule, filled in from the DM default and the defaults; else NOTHING."""
        rules = self._rules
        if rules is None:
            return Scope()
        platform_rules: tuple[_SlackRule, ...] | tuple[_TeamsRule, ...] = ()
        if request.platform == "slack":
            platform_rules = rules.slack
        elif request.platform == "teams":
            platform_rules = rules.teams
        best: _ScopeValues | None = None
        best_specificity = -1
        for rule in platform_rules:
            specificity = rule.specificity(request)
            if specificity is not None and specificity > best_specificity:
                best, best_specificity = rule, specificity
        layers = [best, rules.direct if request.is_direct else None, rules.defaults]
        collections = next((layer.collections for layer in layers if layer and layer.collections is not None), None)
        return Scope(collections=collections) if collections else NOTHING


__all__ = ["NOTHING", "ScopeResolver", "ScopeRules"]
