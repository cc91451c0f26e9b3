"""The black-box checks of issue 28 against a real `regbot serve` on 127.0.0.1.

    .venv/bin/python -m benchmarks.hardening            # prints one JSON object of figures

Ingests the bundled samples into a temporary data dir, starts the server (offline LLM, playground, anonymous
Teams, Slack with a signing secret, /admin) and measures what a stranger can do: fresh playground ids, Teams
requests from a web page or to a foreign serviceUrl, 32 KB of unclosed <at>, oversized Slack timestamps, deep
JSON, an out-of-range /admin window; then a second server under `collections: []`, and the ingest time of a
file with 30 `<!---->`. Every server log is scanned for tracebacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

if str(REPO_ROOT := Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

SAMPLES = REPO_ROOT / "samples"
ADMIN_TOKEN = "hardening-admin-token"
READY_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLACK_", "MICROSOFT_", "REGBOT_", "REDIS_URL", "CHROMA_URL", "TEAMS_"))}
    return {**keep, "REGBOT_DATA_DIR": str(data_dir), "REGBOT_LLM": "offline", "REGBOT_HOST": "127.0.0.1",
            "REGBOT_PORT": str(port), "REGBOT_PLAYGROUND": "true", "TEAMS_ALLOW_ANONYMOUS": "true",
            "SLACK_BOT_TOKEN": "xoxb-hardening", "SLACK_SIGNING_SECRET": "hardening-secret",
            "SLACK_API_URL": "http://127.0.0.1:9/api/", "REGBOT_ADMIN_TOKEN": ADMIN_TOKEN, **extra}


def ingest(data_dir: Path, *paths: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bot.cli", "ingest", *map(str, paths)], cwd=REPO_ROOT, check=True,
                   env=_env(data_dir, 0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return round(time.perf_counter() - started, 2)


@contextlib.asynccontextmanager
async def server(data_dir: Path, log: Path, **extra: str):
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=REPO_ROOT,
                                   env=_env(data_dir, port, **extra), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        async with aiohttp.ClientSession() as http:
            while True:
                if process.poll() is not None:
                    raise SystemExit(log.read_text(errors="replace")[-3000:])
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(url + "/readyz") as response:
                        if response.status == 200:
                            break
                if time.monotonic() > deadline:
                    raise SystemExit("server not ready")
                await asyncio.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


async def _accepting_connector() -> str:
    """A stand-in Bot Connector on 127.0.0.1 that accepts every activity (kept for the process's life)."""
    from aiohttp import web

    async def accept(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"id": "bench-reply"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", accept)
    runner = web.AppRunner(app)
    await runner.setup()
    port = _free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return f"http://127.0.0.1:{port}/"


async def status_of(http: aiohttp.ClientSession, method: str, url: str, **kwargs) -> int:
    async with http.request(method, url, **kwargs) as response:
        await response.read()
        return response.status


def activity(text: str, service_url: str, activity_id: str) -> dict:
    return {"type": "message", "id": activity_id, "channelId": "msteams", "serviceUrl": service_url,
            "from": {"id": "29:user", "name": "User"}, "recipient": {"id": "28:bot", "name": "regbot"},
            "conversation": {"id": "a:personal", "conversationType": "personal", "tenantId": "t"},
            "text": text, "timestamp": "2026-01-01T00:00:00Z"}


async def probe_main(url: str) -> dict:
    figures: dict = {}
    async with aiohttp.ClientSession() as http:  # keeps no cookie of 127.0.0.1: a fresh session every time
        limited = 0
        for n in range(25):
            body = {"question": "경조휴가는 며칠이야?", "conversation_id": f"tab{n:013d}", "user_id": f"fresh{n:011d}"}
            async with http.post(url + "/api/playground/ask", json=body) as response:
                limited += "요청이 너무 많아요" in await response.text()
        figures["playground_fresh_ids_limited_of_25"] = limited

        teams = url + "/api/messages"
        foreign = "http://203.0.113.9:8080/"
        figures["teams_text_plain"] = await status_of(
            http, "POST", teams, data=json.dumps(activity("연차?", foreign, "a1")),
            headers={"Content-Type": "text/plain", "Origin": "https://evil.example"})
        figures["teams_cross_site_origin"] = await status_of(
            http, "POST", teams, json=activity("연차?", foreign, "a2"), headers={"Origin": "https://evil.example"})
        figures["teams_foreign_service_url"] = await status_of(
            http, "POST", teams, json=activity("연차?", foreign, "a3"))

        async def health() -> float:
            started = time.perf_counter()
            await status_of(http, "GET", url + "/healthz")
            return time.perf_counter() - started

        local = await _accepting_connector()  # the answer to the <at> flood has somewhere to go
        started = time.perf_counter()
        at_status, health_s = await asyncio.gather(
            status_of(http, "POST", teams, json=activity("<at>" * 8192, local, "a4")), health())
        figures["teams_32kb_unclosed_at"] = {"status": at_status, "seconds": round(time.perf_counter() - started, 3),
                                             "healthz_meanwhile_s": round(health_s, 3)}

        for digits in (309, 4301):
            figures[f"slack_timestamp_{digits}_digits"] = await status_of(
                http, "POST", url + "/slack/events", data=b"{}",
                headers={"X-Slack-Request-Timestamp": "9" * digits, "X-Slack-Signature": "v0=" + "0" * 64})
        deep = b"[" * 5000
        figures["deep_json_playground"] = await status_of(http, "POST", url + "/api/playground/ask", data=deep,
                                                          headers={"Content-Type": "application/json"})
        figures["deep_json_teams"] = await status_of(http, "POST", teams, data=deep,
                                                     headers={"Content-Type": "application/json"})
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        for since in ("99999999999w", "99999999w"):
            figures[f"admin_since_{since}"] = await status_of(http, "GET", url + "/admin", params={"since": since},
                                                              headers=admin)
    return figures


async def probe_scopes(url: str) -> dict:
    async with aiohttp.ClientSession() as http:
        body = {"question": "취업규칙 제1조", "conversation_id": "scopetab00000001"}
        async with http.post(url + "/api/playground/ask", json=body) as response:
            text = await response.text()
        done = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and '"done"' in line]
        citations = done[-1]["answer"]["citations"] if done else None
        article = await status_of(http, "GET", url + "/api/playground/article",
                                  params={"doc": "취업규칙", "article": "제1조"})
    return {"collections_empty_citations": citations, "collections_empty_article_status": article}


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="regbot-hardening-") as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        figures: dict = {"ingest_samples_s": ingest(data_dir, SAMPLES)}
        crafted = root / "crafted" / "comments.md"
        crafted.parent.mkdir()
        rule = "\n# 출장 규정\n\n제1조(목적) 이 규정은 출장비를 정한다.\n"
        crafted.write_text("<!---->" * 30 + rule, encoding="utf-8")
        figures["ingest_30_empty_comments_cli_s"] = ingest(root / "crafted-data", crafted)  # with model loads
        from rag.knowledge.loaders import LoaderRegistry
        from rag.knowledge.parser import RegulationParser

        started = time.perf_counter()
        RegulationParser().parse(LoaderRegistry().load(crafted), fallback_name="comments")
        figures["load_and_parse_30_empty_comments_s"] = round(time.perf_counter() - started, 4)
        async with server(data_dir, root / "main.log") as url:
            figures.update(await probe_main(url))
        scopes = root / "scopes.yaml"
        scopes.write_text("defaults:\n  collections: []\n", encoding="utf-8")
        async with server(data_dir, root / "scopes.log", REGBOT_SCOPES_FILE=str(scopes)) as url:
            figures.update(await probe_scopes(url))
        logs = (root / "main.log").read_text(errors="replace") + (root / "scopes.log").read_text(errors="replace")
        figures["tracebacks_in_server_logs"] = logs.count("Traceback")
        figures["traceback_causes"] = sorted({line.strip()[:160] for line in logs.splitlines()
                                              if line.strip().endswith("Error") or "Error:" in line})[:10]
    print(json.dumps(figures, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
