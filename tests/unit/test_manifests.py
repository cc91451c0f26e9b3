"""The deployment files agree with the code: ports, probe routes, env names, images, users and grace periods.

Docker and Kubernetes are not available in the test environment, so these checks read the files; the probe
paths themselves are requested from the real server in tests/e2e/test_deployment_probes.py.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from bot.config import Settings
from bot.server.lifecycle import DEFAULT_DRAIN_TIMEOUT_S
from bot.service.scopes import ScopeRules
from testkit import REPO_ROOT

K8S = REPO_ROOT / "manifests" / "k8s"
ADAPTERS_CLOSE_GRACE_S = 5 + 10  # SlackAdapter.close (5 s) and TeamsAdapter's default shutdown_grace_s (10 s)
SETTINGS_NAMES = {field.alias for field in Settings.model_fields.values() if field.alias}
DEFAULT_PORT = Settings.model_fields["port"].default


def load_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


@pytest.fixture(scope="module")
def k8s() -> dict[tuple[str, str], dict[str, Any]]:
    """Every Kubernetes object under manifests/k8s, by (kind, name)."""
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in load_documents(path):
            if doc.get("kind") != "Kustomization":
                objects[(doc["kind"], doc["metadata"]["name"])] = doc
    return objects


@pytest.fixture(scope="module")
def deployment(k8s) -> dict[str, Any]:
    return k8s[("Deployment", "regbot")]


@pytest.fixture(scope="module")
def server_container(deployment) -> dict[str, Any]:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "regbot")


@pytest.fixture(scope="module")
def config(k8s) -> dict[str, str]:
    return k8s[("ConfigMap", "regbot-config")]["data"]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def interpolated(value: str) -> str:
    """A compose value with `${VAR…}` filled in as compose would from .env (every variable: "secret")."""
    return re.sub(r"\$\{[^}]*\}", "secret", value)


def named_port(container: dict[str, Any], name: str) -> int:
    return next(p["containerPort"] for p in container["ports"] if p["name"] == name)


def pod_labels(workload: dict[str, Any]) -> dict[str, str]:
    return workload["spec"]["template"]["metadata"]["labels"]


def dockerfile_stages() -> list[list[str]]:
    """Dockerfile instructions (continuation lines joined), split by FROM."""
    text = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"<<'PY'\n.*?\nPY\n", "<<'PY'\n", text, flags=re.DOTALL)  # heredoc bodies are not instructions
    lines = [line for line in text.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]
    stages: list[list[str]] = []
    for line in lines:
        if line.startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


class TestDeployment:
    def test_container_listens_on_the_default_port_the_config_sets(self, server_container, config):
        assert named_port(server_container, "http") == DEFAULT_PORT == int(config["REGBOT_PORT"])
        assert config["REGBOT_HOST"] == "0.0.0.0"  # the default 127.0.0.1 would be unreachable in a pod

    @pytest.mark.parametrize(("probe", "path"), [
        ("readinessProbe", "/readyz"), ("livenessProbe", "/healthz"), ("startupProbe", "/healthz"),
    ])
    def test_probes_use_the_contract_routes_on_the_server_port(self, server_container, probe, path):
        check = server_container[probe]["httpGet"]
        assert check["path"] == path
        assert named_port(server_container, check["port"]) == DEFAULT_PORT

    def test_prometheus_scrapes_metrics_on_the_server_port(self, deployment):
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert (annotations["prometheus.io/path"], int(annotations["prometheus.io/port"])) == ("/metrics", DEFAULT_PORT)

    def test_grace_period_covers_prestop_drain_and_adapter_close(self, deployment, server_container):
        pre_stop = server_container["lifecycle"]["preStop"]["exec"]["command"]
        assert pre_stop[0] == "sleep"
        needed_s = int(pre_stop[1]) + DEFAULT_DRAIN_TIMEOUT_S + ADAPTERS_CLOSE_GRACE_S
        assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= needed_s

    def test_runs_as_the_images_non_root_user(self, deployment):
        security = deployment["spec"]["template"]["spec"]["securityContext"]
        user = next(line.split()[1] for line in dockerfile_stages()[-1] if line.startswith("USER "))
        assert security["runAsNonRoot"] is True
        assert f"{security['runAsUser']}:{security['runAsGroup']}" == user

    def test_selector_matches_its_pods_and_rollouts_keep_capacity(self, deployment):
        assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels(deployment).items()
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0

    def test_scopes_file_is_mounted_where_the_config_points(self, deployment, server_container, config, k8s):
        scopes_path = Path(config["REGBOT_SCOPES_FILE"])
        mounts = [m for m in server_container["volumeMounts"] if m["mountPath"] == str(scopes_path.parent)]
        assert len(mounts) == 1
        volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mounts[0]["name"])
        files = k8s[("ConfigMap", volume["configMap"]["name"])]["data"]
        assert scopes_path.name in files
        rules = ScopeRules.model_validate(yaml.safe_load(files[scopes_path.name]))  # raises on a malformed file
        assert rules.defaults.collections, "a place without a rule of its own must still search something"

    def test_data_dir_is_a_writable_volume(self, server_container, config):
        mounts = {m["mountPath"]: m for m in server_container["volumeMounts"]}
        assert config["REGBOT_DATA_DIR"] in mounts
        assert not mounts[config["REGBOT_DATA_DIR"]].get("readOnly", False)


class TestClusterObjects:
    def test_service_targets_the_http_port_of_the_pods(self, k8s, deployment):
        service = k8s[("Service", "regbot")]
        assert service["spec"]["selector"].items() <= pod_labels(deployment).items()
        assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]

    def test_autoscaler_and_disruption_budget_point_at_the_deployment(self, k8s, deployment):
        hpa = k8s[("HorizontalPodAutoscaler", "regbot")]
        target = hpa["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", "regbot")
        assert hpa["spec"]["minReplicas"] >= 2
        pdb = k8s[("PodDisruptionBudget", "regbot")]
        assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels(deployment).items()

    def test_ingest_job_runs_regbot_ingest_into_the_index_the_pods_copy(self, k8s, server_container, deployment):
        job = k8s[("Job", "regbot-ingest")]["spec"]["template"]["spec"]
        ingest = job["containers"][0]
        assert ingest["image"] == server_container["image"]
        assert ingest["args"][0] == "ingest"
        job_claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in job["volumes"]
                      if "persistentVolumeClaim" in v}
        data_mount = next(m for m in ingest["volumeMounts"] if m["mountPath"] == "/data")
        pod_claims = [v["persistentVolumeClaim"]["claimName"] for v in deployment["spec"]["template"]["spec"]["volumes"]
                      if "persistentVolumeClaim" in v]
        assert job_claims[data_mount["name"]] in pod_claims

    def test_config_and_secret_only_set_settings_that_exist(self, k8s, config):
        secret = k8s[("Secret", "regbot-secrets")]["stringData"]
        assert set(config) - SETTINGS_NAMES == set()
        assert set(secret) - SETTINGS_NAMES == {"REDIS_PASSWORD"}  # Redis's own; regbot gets it inside REDIS_URL

    def test_service_urls_in_the_config_name_cluster_services(self, k8s, config, server_container):
        env = {e["name"]: e.get("value", "") for e in server_container["env"]}
        for name, kind_port in (("REDIS_URL", "redis"), ("CHROMA_URL", "http")):
            url = urlparse(config.get(name) or env[name])
            service = k8s[("Service", url.hostname)]
            assert url.port in [p["port"] for p in service["spec"]["ports"] if p["name"] == kind_port]

    def test_every_referenced_object_is_defined(self, k8s):
        text = "\n".join(p.read_text(encoding="utf-8") for p in K8S.glob("*.yaml"))
        for kind, pattern in (("ConfigMap", r"configMapRef:\s*\n\s*name: (\S+)"),
                              ("Secret", r"secretRef:\s*\n\s*name: (\S+)"),
                              ("PersistentVolumeClaim", r"claimName: (\S+)")):
            for name in re.findall(pattern, text):
                assert (kind, name) in k8s, f"{kind} {name} is referenced but not defined"

    def test_kustomization_applies_every_manifest_but_the_secret_example(self):
        kustomization = load_documents(K8S / "kustomization.yaml")[0]
        files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
        assert set(kustomization["resources"]) == files

    def test_chroma_server_is_the_clients_release(self, k8s, compose):
        client = version("chromadb")
        k8s_image = k8s[("StatefulSet", "regbot-chroma")]["spec"]["template"]["spec"]["containers"][0]["image"]
        assert k8s_image == f"chromadb/chroma:{client}"
        assert compose["services"]["chroma-server"]["image"] == f"chromadb/chroma:{client}"


class TestCompose:
    def test_has_regbot_redis_and_chroma(self, compose):
        assert {"regbot", "redis", "chroma", "ingest"} <= set(compose["services"])

    def test_regbot_publishes_its_port_and_reaches_redis_and_chroma_by_service_name(self, compose):
        regbot = compose["services"]["regbot"]
        env = regbot["environment"]
        assert regbot["ports"] == [f"{DEFAULT_PORT}:{DEFAULT_PORT}"]
        assert int(env["REGBOT_PORT"]) == DEFAULT_PORT
        assert urlparse(interpolated(env["REDIS_URL"])).hostname == "redis"
        assert (urlparse(env["CHROMA_URL"]).hostname, urlparse(env["CHROMA_URL"]).port) == ("chroma", 8000)
        assert set(env) <= SETTINGS_NAMES

    def test_stop_grace_period_covers_the_drain(self, compose):
        grace = compose["services"]["regbot"]["stop_grace_period"]
        assert grace.endswith("s") and int(grace[:-1]) >= DEFAULT_DRAIN_TIMEOUT_S + ADAPTERS_CLOSE_GRACE_S

    def test_ingest_and_serve_share_the_data_volume(self, compose):
        serve_volumes = compose["services"]["regbot"]["volumes"]
        assert serve_volumes[0] in compose["services"]["ingest"]["volumes"]
        assert compose["services"]["ingest"]["command"][0] == "ingest"


class TestDockerfile:
    def test_is_multi_stage_and_the_runtime_copies_the_built_environment(self):
        stages = dockerfile_stages()
        assert len(stages) >= 2
        assert any(line.startswith("COPY --from=builder") for line in stages[-1])

    def test_runtime_runs_as_a_numeric_non_root_user(self):
        user = next(line.split()[1] for line in dockerfile_stages()[-1] if line.startswith("USER "))
        uid = user.split(":")[0]
        assert uid.isdigit() and int(uid) != 0

    def test_exposes_the_default_port_and_health_checks_healthz(self):
        runtime = dockerfile_stages()[-1]
        assert f"EXPOSE {DEFAULT_PORT}" in runtime
        healthcheck = next(line for line in runtime if line.startswith("HEALTHCHECK"))
        assert "/healthz" in healthcheck and "REGBOT_PORT" in healthcheck
        assert any(line.startswith("ENV ") and f"REGBOT_PORT={DEFAULT_PORT}" in line for line in runtime)

    def test_builder_checks_the_bundled_models_load(self):
        text = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
        assert "kiwipiepy_model" in text and "e5-small-q4.bin" in text

    def test_build_context_leaves_out_the_virtualenv_git_and_secrets(self):
        ignored = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").split()
        assert {".venv", ".git", ".env", "tests"} <= set(ignored)


class TestStatePrivacy:
    """Issue 28: eviction must never drop dedupe claims, and only regbot reaches its state and vector stores."""

    def test_redis_never_evicts_in_compose_or_kubernetes(self, k8s, compose):
        k8s_args = k8s[("StatefulSet", "regbot-redis")]["spec"]["template"]["spec"]["containers"][0]["args"]
        compose_args = compose["services"]["redis"]["command"]

        for args in (k8s_args, compose_args):
            assert args[args.index("--maxmemory-policy") + 1] == "noeviction"

    def test_only_regbot_pods_reach_redis_and_chroma(self, k8s, deployment):
        pods = deployment["spec"]["template"]["metadata"]["labels"]
        for name, port in (("regbot-redis", 6379), ("regbot-chroma", 8080)):  # Chroma: its auth proxy
            policy = k8s[("NetworkPolicy", f"{name}-ingress")]["spec"]
            selected = k8s[("StatefulSet", name)]["spec"]["template"]["metadata"]["labels"]
            [rule] = policy["ingress"]
            assert policy["podSelector"]["matchLabels"].items() <= selected.items()
            assert all(peer["podSelector"]["matchLabels"].items() <= pods.items() for peer in rule["from"])
            assert [p["port"] for p in rule["ports"]] == [port]
