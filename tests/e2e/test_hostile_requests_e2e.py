"""What a stranger can send to `regbot serve` (issue 14): a 4xx without a traceback, and almost no log.

Everything goes over HTTP into the real server (`bot.server.server`), with its logging configured as `regbot serve`
configures it; the log lines are read from the JSON handler's stream.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from slack_sdk.signature import SignatureVerifier

from bot.server.logging_setup import configure_logging
from tests.e2e.conftest import RunningServer, StartServer
from tests.e2e.teams.activities import personal_message

SIGNING_SECRET = "hostile-test-secret"
APP_ID = "11111111-2222-3333-4444-555555555555"
APP_PASSWORD = "app-password-of-the-azure-bot-registration"
TENANT_ID = "72f988bf-0000-4000-8000-000000000001"
UNUSED_API = "http://127.0.0.1:9/api/"  # nothing a stranger sends may make the bot call out
SLACK = {"SLACK_BOT_TOKEN": "xoxb-hostile", "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": UNUSED_API}
TEAMS = {"MICROSOFT_APP_ID": APP_ID, "MICROSOFT_APP_PASSWORD": APP_PASSWORD, "MICROSOFT_APP_TENANT_ID": TENANT_ID}
CONTENT = "육아휴직 중에 이직해도 되나요? "  # what a stranger's body carries; never in the log


class ServerLog:
    """The JSON lines `regbot serve` would write to stderr."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def size(self) -> int:
        return len(self.stream.getvalue().encode())

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    def errors(self) -> list[dict]:
        return [e for e in self.entries() if e["level"] in ("ERROR", "CRITICAL") or "exception" in e]


@pytest.fixture
def server_log() -> Iterator[ServerLog]:
    """`configure_logging` as `regbot serve` calls it; pytest's handlers and levels are put back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    named = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    stream = io.StringIO()
    configure_logging(log_content=False, level=logging.INFO, stream=stream)
    yield ServerLog(stream)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name, old in named.items():
        logging.getLogger(name).setLevel(old)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def slack_signature(body: bytes, *, secret: str = SIGNING_SECRET) -> dict[str, str]:
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body.decode())
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}


async def post(http: aiohttp.ClientSession, url: str, body: bytes | object, **headers: str) -> tuple[int, str]:
    async with http.post(url, data=body, headers=headers) as response:
        return response.status, await response.text()


class TestSlackVerifiesBeforeParsing:
    @pytest.mark.parametrize("body", [b'{"x":', b"[]", b"\xff", b"payload=%7B%22x", b"a=1"],
                             ids=["cut-json", "array", "not-utf8", "cut-payload", "form"])
    async def test_unsigned_malformed_body_is_401_without_an_error_in_the_log(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, body: bytes
    ) -> None:
        server = await start_regbot(**SLACK)

        status, _ = await post(http, server.url + "/slack/events", body, **{"Content-Type": "application/json"})

        assert status == 401
        assert server_log.errors() == []

    @pytest.mark.parametrize("timestamp", ["", "soon", "1e9", "-1"])
    async def test_unreadable_timestamp_is_401(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, timestamp: str
    ) -> None:
        server = await start_regbot(**SLACK)
        headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=00"}

        assert (await post(http, server.url + "/slack/events", b"{}", **headers))[0] == 401
        assert server_log.errors() == []

    @pytest.mark.parametrize(("body", "content_type"), [
        (b'{"x":', "application/json"),
        (b"[]", "application/json"),
        (b"payload=%7B%22x", "application/x-www-form-urlencoded"),
    ], ids=["cut-json", "array", "cut-payload"])
    async def test_signed_malformed_body_is_400(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, body: bytes,
        content_type: str,
    ) -> None:
        server = await start_regbot(**SLACK)
        headers = {"Content-Type": content_type, **slack_signature(body)}

        status, _ = await post(http, server.url + "/slack/events", body, **headers)

        assert status == 400
        assert server_log.errors() == []


class TestBodyLimit:
    async def test_body_over_the_limit_is_413_on_every_route(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server = await start_regbot(REGBOT_MAX_BODY_BYTES="65536", TEAMS_ALLOW_ANONYMOUS="true", **SLACK)
        body = b"{" + b" " * 70_000 + b"}"

        statuses = [(await post(http, server.url + path, body, **slack_signature(body)))[0]
                    for path in ("/slack/events", "/api/messages")]

        assert statuses == [413, 413]
        assert server_log.errors() == []

    async def test_chunked_body_over_the_limit_is_413(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server = await start_regbot(REGBOT_MAX_BODY_BYTES="65536", **SLACK)

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(40):  # no Content-Length: the limit applies while reading
                yield b" " * 4096

        status, _ = await post(http, server.url + "/slack/events", chunks())

        assert status == 413
        assert server_log.errors() == []

    async def test_default_limit_is_one_mebibyte(self, start_regbot: StartServer, http: aiohttp.ClientSession) -> None:
        server = await start_regbot(**SLACK)

        status, _ = await post(http, server.url + "/slack/events", b" " * (1024**2 + 1))

        assert status == 413


def _rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _claims() -> dict:
    now = int(time.time())
    return {"aud": APP_ID, "iss": "https://api.botframework.com", "iat": now, "nbf": now, "exp": now + 600,
            "serviceurl": "http://127.0.0.1:9/"}


class TestTeamsTokens:
    @pytest.mark.parametrize(
        "token",
        [
            pytest.param(lambda: jwt.encode(_claims(), _rsa_key(), algorithm="RS256"), id="rs256-without-kid"),
            pytest.param(lambda: jwt.encode(_claims(), APP_PASSWORD, algorithm="HS256"), id="hs256-app-password"),
            pytest.param(lambda: jwt.encode(_claims(), APP_PASSWORD, algorithm="HS256", headers={"kid": "k1"}),
                         id="hs256-with-kid"),
            pytest.param(lambda: jwt.encode(_claims(), None, algorithm="none"), id="unsigned"),
            pytest.param(lambda: "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", id="no-kid-empty-claims"),
            pytest.param(lambda: "\u00ff\u00fe.garbage", id="garbage"),
        ],
    )
    async def test_malformed_or_foreign_token_is_401(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession, token
    ) -> None:
        server = await start_regbot(**TEAMS)
        activity = personal_message("연차는 며칠이야?", service_url="http://127.0.0.1:9/", activity_id="a1")
        headers = {"Authorization": f"Bearer {token()}", "Content-Type": "application/json"}

        status, _ = await post(http, server.url + "/api/messages", json.dumps(activity).encode(), **headers)

        assert status == 401
        assert server_log.errors() == []


class TestLogVolume:
    async def test_forged_megabyte_requests_add_under_a_kilobyte_of_log_each(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server: RunningServer = await start_regbot(REGBOT_PLAYGROUND="true", **SLACK, **TEAMS)
        body = json.dumps({"type": "event_callback", "event": {"text": CONTENT * 33_000}}).encode()[:1_000_000]
        forged = {
            "/slack/events": slack_signature(body, secret="forged"),
            "/api/messages": {"Authorization": "Bearer " + "x" * 200},
            "/api/playground/ask": {"Content-Type": "application/json"},
        }
        growth: dict[str, tuple[int, int]] = {}
        for path, headers in forged.items():
            before = server_log.size
            status, _ = await post(http, server.url + path, body, **headers)
            growth[path] = (status, server_log.size - before)

        assert {path: status for path, (status, _) in growth.items()} == {
            "/slack/events": 401, "/api/messages": 401, "/api/playground/ask": 413}
        assert all(size < 1024 for _, size in growth.values()), growth
        assert CONTENT.strip() not in server_log.stream.getvalue()

    async def test_each_refused_request_is_one_line_with_method_path_status_size_and_id(
        self, start_regbot: StartServer, server_log: ServerLog, http: aiohttp.ClientSession
    ) -> None:
        server = await start_regbot(**SLACK)
        body = json.dumps({"text": CONTENT}).encode()

        async with http.post(server.url + "/slack/events?text=" + CONTENT, data=body) as response:
            request_id = response.headers.get("X-Request-Id")
            assert response.status == 401

        lines = [e for e in server_log.entries() if e.get("request_id") == request_id]
        assert request_id and len(lines) == 1
        assert (lines[0]["method"], lines[0]["path"], lines[0]["status"]) == ("POST", "/slack/events", 401)
        assert lines[0]["bytes_in"] == len(body)
        assert CONTENT.strip() not in server_log.stream.getvalue()
