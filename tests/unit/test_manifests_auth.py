"""Issue 28: Redis and Chroma require a secret in compose and Kubernetes, and the secret comes from .env or a
Secret, never inline. Chroma 1.x has no authentication of its own, so an nginx proxy checks regbot's bearer
token in front of it; regbot's client sends CHROMA_TOKEN (checked against a fake of that proxy on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
import yaml
from aiohttp import web

from rag.retrieval.dense import open_chroma_client
from testkit import REPO_ROOT

K8S = REPO_ROOT / "manifests" / "k8s"
TEMPLATE = REPO_ROOT / "manifests" / "chroma-auth" / "default.conf.template"
SECRET_NAMES = re.compile(r"PASSWORD|TOKEN|SECRET|_KEY$|_AUTH$")


def k8s_objects() -> dict[tuple[str, str], dict[str, Any]]:
    objects = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc and doc.get("kind") != "Kustomization":
                objects[(doc["kind"], doc["metadata"]["name"])] = doc
    return objects


def pod_containers(objects) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for (kind, name), doc in objects.items():
        if kind in ("Deployment", "StatefulSet", "Job"):
            spec = doc["spec"]["template"]["spec"]
            found += [(name, c) for c in spec.get("initContainers", []) + spec["containers"]]
    return found


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


@pytest.fixture(scope="module")
def objects():
    return k8s_objects()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


class TestKubernetes:
    def test_every_redis_container_requires_the_password_of_the_secret(self, objects):
        redis = [c for _, c in pod_containers(objects) if c["image"].startswith("redis:")]
        assert redis
        for container in redis:
            args = container["args"]
            assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
            ref = env_of(container)["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
            assert (ref["name"], ref["key"]) == ("regbot-secrets", "REDIS_PASSWORD")

    def test_regbot_reaches_redis_with_the_password_and_chroma_with_the_token(self, objects):
        server = next(c for name, c in pod_containers(objects) if name == "regbot" and c["name"] == "regbot")
        env = env_of(server)
        assert env["REDIS_URL"]["value"].startswith("redis://:$(REDIS_PASSWORD)@")
        names = list(env)
        assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")  # $(…) expands only earlier variables
        assert {"secretRef": {"name": "regbot-secrets"}} in server["envFrom"]
        assert {"REDIS_PASSWORD", "CHROMA_TOKEN"} <= set(objects[("Secret", "regbot-secrets")]["stringData"])
        ingest = next(c for name, c in pod_containers(objects) if name == "regbot-ingest" and c["name"] == "ingest")
        assert env_of(ingest)["CHROMA_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "CHROMA_TOKEN"

    def test_chroma_is_reached_only_through_its_token_checking_proxy(self, objects):
        pod = objects[("StatefulSet", "regbot-chroma")]["spec"]["template"]["spec"]
        proxy = next(c for c in pod["containers"] if c["name"] == "auth-proxy")
        proxy_port = next(p for p in proxy["ports"] if p["name"] == "proxy")["containerPort"]
        [service_port] = objects[("Service", "regbot-chroma")]["spec"]["ports"]
        assert service_port["targetPort"] == "proxy"
        [rule] = objects[("NetworkPolicy", "regbot-chroma-ingress")]["spec"]["ingress"]
        assert [p["port"] for p in rule["ports"]] == [proxy_port]
        env = env_of(proxy)
        assert env["CHROMA_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "CHROMA_TOKEN"
        assert int(env["CHROMA_PROXY_PORT"]["value"]) == proxy_port
        template = objects[("ConfigMap", "regbot-chroma-auth")]["data"]["default.conf.template"]
        assert template == TEMPLATE.read_text(encoding="utf-8")

    def test_no_secret_is_written_inline_in_a_container(self, objects):
        for name, container in pod_containers(objects):
            for var, entry in env_of(container).items():
                if SECRET_NAMES.search(var):
                    assert "valueFrom" in entry, f"{name}/{container['name']}: {var} is inline"


class TestCompose:
    def test_redis_requires_the_password_from_env_and_regbot_sends_it(self, compose):
        services = compose["services"]
        command = services["redis"]["command"]
        assert command[command.index("--requirepass") + 1].startswith("${REDIS_PASSWORD:?")
        assert services["redis"]["environment"]["REDISCLI_AUTH"].startswith("${REDIS_PASSWORD:?")
        assert services["regbot"]["environment"]["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD:?")

    def test_chroma_server_is_only_on_a_network_its_proxy_shares(self, compose):
        services = compose["services"]
        assert compose["networks"]["chroma-internal"]["internal"] is True
        assert services["chroma-server"]["networks"] == ["chroma-internal"]
        assert "chroma-internal" not in services["regbot"].get("networks", ["default"])
        proxy = services["chroma"]
        assert proxy["environment"]["CHROMA_TOKEN"].startswith("${CHROMA_TOKEN:?")
        assert proxy["environment"]["CHROMA_UPSTREAM"] == "chroma-server:8000"
        assert any(v.startswith(f"./{TEMPLATE.relative_to(REPO_ROOT)}:") for v in proxy["volumes"])
        assert services["regbot"]["environment"]["CHROMA_TOKEN"].startswith("${CHROMA_TOKEN:?")

    def test_no_secret_is_written_inline(self, compose):
        for name, service in compose["services"].items():
            env = service.get("environment") or {}
            for var, value in (env.items() if isinstance(env, dict) else []):
                if SECRET_NAMES.search(var):
                    assert str(value).startswith("${"), f"{name}: {var} is inline"


class TestProxyTemplate:
    def test_admits_only_the_bearer_token_and_the_heartbeat(self):
        text = TEMPLATE.read_text(encoding="utf-8")
        assert '"Bearer ${CHROMA_TOKEN}" 1;' in text and "default 0;" in text
        assert re.search(r"if \(\$chroma_token_ok = 0\) \{\s*return 401;", text)
        open_locations = re.findall(r"location = (\S+)", text)
        assert open_locations == ["/api/v2/heartbeat"]


class FakeChromaProxy:
    """What the nginx proxy does, on 127.0.0.1: 401 without the bearer token, else a minimal Chroma."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen: list[str | None] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append(request.headers.get("Authorization"))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=401)
        path = request.path
        if path.endswith("/auth/identity"):
            return web.json_response({"user_id": "", "tenant": "default_tenant", "databases": ["default_database"]})
        if path.endswith("/databases/default_database"):
            return web.json_response({"id": "00000000-0000-0000-0000-000000000000", "name": "default_database",
                                      "tenant": "default_tenant"})
        if path.endswith("/tenants/default_tenant"):
            return web.json_response({"name": "default_tenant"})
        return web.json_response({"nanosecond heartbeat": 1})


async def test_regbots_chroma_client_sends_the_token_the_proxy_checks() -> None:
    proxy = FakeChromaProxy("a1b2c3")
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    try:
        client = await asyncio.to_thread(open_chroma_client, chroma_url=url, token="a1b2c3")
        assert await asyncio.to_thread(client.heartbeat) == 1
        assert proxy.seen and set(proxy.seen) == {"Bearer a1b2c3"}

        with pytest.raises(Exception):  # noqa: B017 - chromadb's error class for a 401 varies by release
            await asyncio.to_thread(open_chroma_client, chroma_url=url, token="")
        assert proxy.seen[-1] is None
    finally:
        await runner.cleanup()
