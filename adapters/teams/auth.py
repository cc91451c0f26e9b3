"""Who may post to `/api/messages`: the Bot Connector's JWT, or anyone in local anonymous mode."""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from typing import Any, Literal
from urllib.parse import urlparse

from jwt import PyJWK, PyJWTError, get_unverified_header
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.core import OutboundHostValidator
from microsoft_agents.hosting.core.authorization import (
    AgentAuthConfiguration,
    AuthTypes,
    ClaimsIdentity,
    Connections,
    JwtTokenValidator,
)
from microsoft_agents.hosting.core.authorization.jwt.jwt_token_validator import _JwkClientManager

from rag.errors import ConfigError

logger = logging.getLogger(__name__)

AuthMode = Literal["jwt", "anonymous", "closed"]


class TeamsAuth:
    """Inbound JWT validation and outbound credentials for a single-tenant Azure Bot.

    - With an app id: every request needs a valid Bot Connector token (audience = the app id);
      replies use the app's client secret in its tenant, and only Microsoft service URLs are accepted.
    - Without an app id and with `allow_anonymous`: requests are accepted without a token and replies
      carry none (the Agents Playground, local tests). Never expose this mode to the internet.
    - Otherwise: every request is refused (401), so a half-configured server never answers anyone.
    """

    def __init__(self, *, app_id: str, app_password: str, tenant_id: str, allow_anonymous: bool,
                 openid_metadata_url: str = "") -> None:
        self.mode: AuthMode
        self.tenant_id = ""
        if app_id:
            if not app_password or not tenant_id:
                raise ConfigError(
                    "MICROSOFT_APP_ID is set: also set MICROSOFT_APP_PASSWORD and MICROSOFT_APP_TENANT_ID "
                    "(regbot registers as a single-tenant Azure Bot)"
                )
            if allow_anonymous:
                logger.warning("TEAMS_ALLOW_ANONYMOUS is ignored because MICROSOFT_APP_ID is set")
            self.mode = "jwt"
            self.tenant_id = tenant_id
            self._config = AgentAuthConfiguration(
                auth_type=AuthTypes.client_secret,
                client_id=app_id,
                tenant_id=tenant_id,
                client_secret=app_password,
                anonymous_allowed=False,
                validate_issuer=True,  # the SDK checks the issuer only when asked (Bot Connector or the tenant)
            )
        elif allow_anonymous:
            logger.warning("Teams accepts unauthenticated requests (TEAMS_ALLOW_ANONYMOUS); local use only")
            self.mode = "anonymous"
            self._config = AgentAuthConfiguration(anonymous_allowed=True)
        else:
            logger.info("Teams is not configured (no MICROSOFT_APP_ID): /api/messages answers 401")
            self.mode = "closed"
            self._config = AgentAuthConfiguration(anonymous_allowed=False)
        self._validator = JwtTokenValidator(self._config)
        if openid_metadata_url:
            # The SDK picks Microsoft's key sets from the token's issuer; this replaces them with the set the
            # metadata names (a sovereign cloud's, or a local fake's in tests). Audience, issuer, expiry and
            # tenant checks stay the SDK's.
            logger.warning("Teams tokens are verified with the keys of %s", openid_metadata_url)
            self._validator._jwk_client_manager = _MetadataKeys(openid_metadata_url)

    async def authenticate(self, authorization: str | None) -> ClaimsIdentity | None:
        """The caller's identity, or None when the request must be refused with 401."""
        if self.mode == "anonymous":
            return ClaimsIdentity()  # empty claims: the SDK then sends replies without a token
        if self.mode == "closed":
            return None
        token = _bearer_token(authorization)
        if token is None or not _is_bot_connector_shaped(token):
            return None
        try:
            return await self._validator.validate_token(token)
        except (PyJWTError, OSError, ValueError, KeyError, TypeError) as error:
            # The SDK validator trusts the token's shape (a KeyError for a missing claim): all of it is a 401.
            logger.info("Rejected a Teams token: %s", type(error).__name__)
            return None

    def connections(self) -> Connections:
        """The SDK connection manager that obtains tokens for replies."""
        return MsalConnectionManager(connections_configurations={"SERVICE_CONNECTION": self._config})

    def host_validator(self) -> OutboundHostValidator:
        """Service URLs we may send to: Microsoft's hosts when authenticated, anything locally."""
        return OutboundHostValidator(enabled=self.mode == "jwt")


class _MetadataKeys(_JwkClientManager):
    """Signing keys from the `jwks_uri` of one OpenID metadata document, whatever the token's issuer."""

    def __init__(self, metadata_url: str) -> None:
        super().__init__()
        url = urlparse(metadata_url)
        if url.scheme != "https" and url.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError("TEAMS_OPENID_METADATA_URL must be https (plain http only on this machine)")
        self._metadata_url = metadata_url
        self._jwks_uri: str | None = None

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> PyJWK:
        if self._jwks_uri is None:
            self._jwks_uri = await asyncio.to_thread(self._read_jwks_uri)
        return await super().get_signing_key(self._jwks_uri, header)

    def _read_jwks_uri(self) -> str:
        with urllib.request.urlopen(self._metadata_url, timeout=10) as response:
            jwks_uri = json.loads(response.read(1 << 20))["jwks_uri"]
        if not isinstance(jwks_uri, str):
            raise ValueError("OpenID metadata without a jwks_uri")
        return jwks_uri


def _is_bot_connector_shaped(token: str) -> bool:
    """RS256 with a key id, as every Bot Connector and Entra token is; checked before the SDK validator.

    The validator indexes the header's `kid` (a token without one was a 500) and would fetch signing keys
    for any token that names one; an HS256 token (say, signed with the app password) never gets that far.
    """
    try:
        header = get_unverified_header(token)
    except PyJWTError:
        return False
    kid = header.get("kid")
    return header.get("alg") == "RS256" and isinstance(kid, str) and bool(kid)


def _bearer_token(authorization: str | None) -> str | None:
    parts = (authorization or "").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    return parts[1]
