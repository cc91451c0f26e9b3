"""Health, readiness and metrics of the real server."""

import aiohttp


async def test_health_ready_and_metrics_answer(start_regbot):
    server = await start_regbot()
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/healthz") as response:
            assert response.status == 200
        async with http.get(server.url + "/readyz") as response:
            body = await response.json()
            assert response.status == 200
            assert body["checks"]["index"] == "ok"
            assert body["checks"]["state"] == "ok"
        async with http.get(server.url + "/metrics") as response:
            assert response.status == 200
            assert "regbot_" in await response.text()
