"""Teams with authentication on, through the real server: Bot Connector tokens signed by an RSA key of a local
key set, whose OpenID metadata a fake serves on 127.0.0.1 (TEAMS_OPENID_METADATA_URL). A right token is
accepted; a wrong audience, issuer, expiry, signing key or tenant is refused (401 from the real server)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from adapters.teams.auth import TeamsAuth
from rag.errors import ConfigError
from tests.e2e.conftest import RunningServer, StartServer
from tests.e2e.teams.activities import personal_message

APP_ID = "11111111-2222-3333-4444-555555555555"
TENANT = "72f988bf-0000-4000-8000-000000000001"
OTHER_TENANT = "0a0a0a0a-0000-4000-8000-000000000002"
KEY_ID = "regbot-test-key"
BOT_CONNECTOR = "https://api.botframework.com"
SERVICE_URL = "https://smba.trafficmanager.net/teams/"


class FakeOpenIdProvider:
    """OpenID metadata and a JWKS with one RSA key on 127.0.0.1; signs tokens with it."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.url = ""
        self.key_requests = 0

    async def metadata(self, request: web.Request) -> web.Response:
        return web.json_response({"issuer": BOT_CONNECTOR, "jwks_uri": f"{self.url}/keys"})

    async def keys(self, request: web.Request) -> web.Response:
        self.key_requests += 1
        public = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return web.json_response({"keys": [{**public, "kid": KEY_ID, "use": "sig", "alg": "RS256"}]})

    def token(self, *, key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": BOT_CONNECTOR, "aud": APP_ID, "iat": now, "nbf": now - 5, "exp": now + 3600,
                   "serviceurl": SERVICE_URL}
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": KEY_ID})


@pytest.fixture
async def openid() -> AsyncIterator[FakeOpenIdProvider]:
    provider = FakeOpenIdProvider()
    app = web.Application()
    app.router.add_get("/.well-known/openid-configuration", provider.metadata)
    app.router.add_get("/keys", provider.keys)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    provider.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    yield provider
    await runner.cleanup()


@pytest.fixture
async def server(start_regbot: StartServer, openid: FakeOpenIdProvider) -> RunningServer:
    return await start_regbot(
        MICROSOFT_APP_ID=APP_ID, MICROSOFT_APP_PASSWORD="secret", MICROSOFT_APP_TENANT_ID=TENANT,
        TEAMS_OPENID_METADATA_URL=f"{openid.url}/.well-known/openid-configuration",
    )


def activity(*, tenant: str = TENANT) -> dict[str, Any]:
    # conversationUpdate without members: authenticated and processed, but nothing to send back (a reply would
    # need a real Entra token for the outbound call). With auth on, only Microsoft's service URLs are accepted.
    body = personal_message("", service_url=SERVICE_URL, activity_id="upd-1")
    body.update(type="conversationUpdate", membersAdded=[])
    body.pop("text")
    body["conversation"]["tenantId"] = tenant
    body["channelData"] = {"tenant": {"id": tenant}}
    return body


async def post(server: RunningServer, body: dict[str, Any], token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as http:
        async with http.post(server.url + "/api/messages", json=body, headers=headers) as response:
            await response.read()
            return response.status


def teams_auth(openid: FakeOpenIdProvider) -> TeamsAuth:
    return TeamsAuth(app_id=APP_ID, app_password="secret", tenant_id=TENANT, allow_anonymous=False,
                     openid_metadata_url=f"{openid.url}/.well-known/openid-configuration")


WRONG_CLAIMS = [
    ("another bot's audience", {"aud": "99999999-2222-3333-4444-555555555555"}),
    ("an issuer that is not the Bot Connector", {"iss": "https://evil.example"}),
    ("expired an hour ago", {"exp": int(time.time()) - 3600, "nbf": int(time.time()) - 7200}),
    ("another tenant's Entra token", {"iss": f"https://sts.windows.net/{OTHER_TENANT}/", "tid": OTHER_TENANT}),
    ("our tenant's issuer, another tenant's id", {"iss": f"https://sts.windows.net/{TENANT}/", "tid": OTHER_TENANT}),
]


class TestTokenValidation:
    """The SDK's validator, with the keys of the local metadata: what it accepts and what it refuses."""

    @pytest.mark.parametrize("claims", [{}, {"iss": f"https://sts.windows.net/{TENANT}/", "tid": TENANT}],
                             ids=["bot-connector", "our-tenant-entra"])
    async def test_a_token_signed_by_the_published_key_is_accepted(self, openid, claims) -> None:
        identity = await teams_auth(openid).authenticate(f"Bearer {openid.token(**claims)}")

        assert identity is not None and not identity.allow_anonymous
        assert identity.get_claim_value("aud") == APP_ID
        assert openid.key_requests == 1  # the key set the metadata names, not Microsoft's

    @pytest.mark.parametrize(("case", "claims"), WRONG_CLAIMS, ids=[c for c, _ in WRONG_CLAIMS])
    async def test_a_wrong_claim_is_refused(self, openid, case: str, claims) -> None:
        assert await teams_auth(openid).authenticate(f"Bearer {openid.token(**claims)}") is None, case

    async def test_a_token_signed_by_another_key_with_the_same_key_id_is_refused(self, openid) -> None:
        forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)

        assert await teams_auth(openid).authenticate(f"Bearer {openid.token(key=forger)}") is None

    def test_the_metadata_must_be_https_unless_on_this_machine(self) -> None:
        with pytest.raises(ConfigError, match="https"):
            TeamsAuth(app_id=APP_ID, app_password="secret", tenant_id=TENANT, allow_anonymous=False,
                      openid_metadata_url="http://keys.example/.well-known/openid-configuration")


class TestThroughTheServer:
    """`POST /api/messages` on the real server: every wrong token is a 401 before anything is processed.

    (An accepted activity goes on to the SDK, which asks Entra for the reply token at login.microsoftonline.com;
    tests never leave 127.0.0.1, so acceptance is pinned by TestTokenValidation above.)
    """

    @pytest.mark.parametrize(("case", "claims"), WRONG_CLAIMS, ids=[c for c, _ in WRONG_CLAIMS])
    async def test_a_wrong_claim_is_refused(self, server, openid, case: str, claims) -> None:
        assert await post(server, activity(), openid.token(**claims)) == 401, case

    async def test_a_forged_signature_is_refused(self, server, openid) -> None:
        forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)

        assert await post(server, activity(), openid.token(key=forger)) == 401

    async def test_a_valid_token_for_an_activity_of_another_tenant_is_refused(self, server, openid) -> None:
        status = await post(server, activity(tenant=OTHER_TENANT), openid.token())

        assert status == 400  # the token is ours, the body claims another tenant: nothing is processed
