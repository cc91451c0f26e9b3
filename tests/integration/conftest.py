"""Fixtures for integration tests: real servers started on free ports of 127.0.0.1."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from testkit import free_port, missing

# --- redis-server --------------------------------------------------------------


class RedisServerProcess:
    """A throwaway redis-server on 127.0.0.1 (no persistence); `stop()` kills it, `start()` revives it on the
    same port, for failover tests."""

    def __init__(self, executable: str, port: int) -> None:
        self.executable = executable
        self.port = port
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> None:
        command = [
            self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--loglevel", "warning",
        ]  # fmt: skip
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2, socket_timeout=0.2)
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                if self._process.poll() is not None:
                    stderr = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
                    raise RuntimeError(f"redis-server exited at start on port {self.port}: {stderr}")
                try:
                    if client.ping():
                        return
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not answer PING in {timeout_s} s")
                time.sleep(0.02)  # polling a readiness condition, not synchronising a test
        finally:
            client.close()

    def stop(self) -> None:
        """Kill the server as a crash would (SIGKILL) and wait for it to go."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServerProcess]:
    """A redis-server for the whole session; tests isolate themselves with their own key prefix."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.skip(missing("redis-server", "not on PATH; scripts/system-deps.sh installs it"))
    server = RedisServerProcess(executable, free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
