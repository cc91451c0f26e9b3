"""Who may post to /api/messages: JWT mode, local anonymous mode, and a closed door otherwise."""

from __future__ import annotations

import pytest

from adapters.teams.auth import TeamsAuth
from rag.errors import ConfigError

APP_ID = "11111111-2222-3333-4444-555555555555"
TENANT_ID = "72f988bf-0000-4000-8000-000000000001"


def jwt_auth(**overrides: object) -> TeamsAuth:
    settings: dict[str, object] = {
        "app_id": APP_ID,
        "app_password": "secret",
        "tenant_id": TENANT_ID,
        "allow_anonymous": False,
    }
    settings.update(overrides)
    return TeamsAuth(**settings)  # type: ignore[arg-type]


class TestTeamsAuth:
    @pytest.mark.parametrize("header", [None, "", "Bearer", "Basic abc", "Bearer not-a-jwt", "Bearer a b"])
    async def test_app_id_requires_a_valid_bot_connector_token(self, header: str | None) -> None:
        assert await jwt_auth().authenticate(header) is None

    async def test_anonymous_flag_is_ignored_when_an_app_id_is_set(self) -> None:
        auth = jwt_auth(allow_anonymous=True)

        assert auth.mode == "jwt"
        assert await auth.authenticate(None) is None
        assert auth.host_validator().enabled  # only Microsoft's service URLs get our token

    async def test_anonymous_mode_lets_local_requests_in_without_credentials(self) -> None:
        auth = TeamsAuth(app_id="", app_password="", tenant_id="", allow_anonymous=True)

        identity = await auth.authenticate(None)

        assert auth.mode == "anonymous"
        assert identity is not None and identity.allow_anonymous  # replies carry no token
        assert not auth.host_validator().enabled

    async def test_unconfigured_teams_refuses_everyone(self) -> None:
        auth = TeamsAuth(app_id="", app_password="", tenant_id="", allow_anonymous=False)

        assert auth.mode == "closed"
        assert await auth.authenticate("Bearer anything") is None

    @pytest.mark.parametrize("missing", ["app_password", "tenant_id"])
    def test_single_tenant_registration_needs_secret_and_tenant(self, missing: str) -> None:
        with pytest.raises(ConfigError, match="MICROSOFT_APP_TENANT_ID"):
            jwt_auth(**{missing: ""})
