"""`regbot serve` as a process: a port in use is one line and a non-zero exit before anything is loaded; Ctrl-C on
an idle server is one calm line, no warnings."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys

import aiohttp

from testkit import REPO_ROOT, free_port
from tests.polling import wait_until


def serve_env(tmp_path) -> dict[str, str]:
    return {**os.environ, "REGBOT_DATA_DIR": str(tmp_path / "data"), "REGBOT_LLM": "offline",
            "REGBOT_HOST": "127.0.0.1"}


def test_a_port_in_use_is_one_line_and_exit_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--port", str(port)], cwd=REPO_ROOT,
                             env=serve_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr == f"regbot: port {port} is in use: pass --port\n"
    assert not (tmp_path / "data").exists()  # refused before the index was opened


async def test_ctrl_c_on_an_idle_server_is_one_calm_line(tmp_path):
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "serve", "--port", str(port), cwd=REPO_ROOT, env=serve_env(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

    async def healthy() -> bool:
        try:
            async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as response:
                return response.status == 200
        except aiohttp.ClientError:
            return False

    try:
        await wait_until(healthy, timeout_s=120, interval_s=0.2)
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        if process.returncode is None:
            process.kill()
    everything = err.decode().splitlines()
    lines = [line for line in everything if not line.startswith("{")]  # off a terminal, JSON logs for collectors
    assert process.returncode == 0
    assert lines[0] == f"regbot serve — listening on http://127.0.0.1:{port}"
    assert "  /admin     off  REGBOT_ADMIN_TOKEN is not set" in lines
    assert lines[-1] == "regbot: stopped"
    assert not [line for line in everything if "WARNING" in line or "Traceback" in line]
