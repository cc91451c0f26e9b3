"""The probe paths the Kubernetes Deployment uses answer 200 on the real server, and /metrics is Prometheus."""

from __future__ import annotations

import aiohttp
import yaml

from testkit import REPO_ROOT


def deployment_probe_paths() -> dict[str, str]:
    deployment = yaml.safe_load((REPO_ROOT / "manifests" / "k8s" / "deployment.yaml").read_text(encoding="utf-8"))
    container = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "regbot")
    return {probe: container[probe]["httpGet"]["path"] for probe in ("startupProbe", "readinessProbe", "livenessProbe")}


async def test_every_probe_of_the_deployment_answers_200_on_a_ready_server(start_regbot):
    server = await start_regbot()
    statuses = {}
    async with aiohttp.ClientSession() as http:
        for probe, path in deployment_probe_paths().items():
            async with http.get(server.url + path) as response:
                statuses[probe] = response.status
        async with http.get(server.url + "/metrics") as response:
            metrics = await response.text()

    assert statuses == {"startupProbe": 200, "readinessProbe": 200, "livenessProbe": 200}
    assert "# TYPE regbot_requests_total counter" in metrics
