"""`regbot serve` refuses settings that would expose it: anonymous Teams on a non-loopback address."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bot.server.server import exposure_problem
from testkit import REPO_ROOT, make_settings


class TestExposureProblem:
    @pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "10.1.2.3", "regbot.example.com", ""])
    def test_anonymous_teams_off_loopback_is_a_problem(self, tmp_path, host: str) -> None:
        settings = make_settings(tmp_path, TEAMS_ALLOW_ANONYMOUS="true", REGBOT_HOST=host)

        problem = exposure_problem(settings)

        assert problem is not None and "TEAMS_ALLOW_ANONYMOUS" in problem and "REGBOT_HOST" in problem

    @pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
    def test_anonymous_teams_on_loopback_is_fine(self, tmp_path, host: str) -> None:
        assert exposure_problem(make_settings(tmp_path, TEAMS_ALLOW_ANONYMOUS="true", REGBOT_HOST=host)) is None

    def test_an_app_id_makes_any_address_fine(self, tmp_path) -> None:
        settings = make_settings(tmp_path, TEAMS_ALLOW_ANONYMOUS="true", REGBOT_HOST="0.0.0.0",
                                 MICROSOFT_APP_ID="11111111-2222-3333-4444-555555555555",
                                 MICROSOFT_APP_PASSWORD="secret", MICROSOFT_APP_TENANT_ID="t")

        assert exposure_problem(settings) is None


def test_serve_exits_non_zero_with_one_clear_line_before_building_anything(tmp_path) -> None:
    # 192.0.2.10 (TEST-NET-1) is not an address of this machine: even a server that started would not be reachable.
    env = {**os.environ, "REGBOT_DATA_DIR": str(tmp_path / "data"), "REGBOT_LLM": "offline",
           "TEAMS_ALLOW_ANONYMOUS": "true", "REGBOT_HOST": "192.0.2.10", "REGBOT_PORT": "39781"}

    run = subprocess.run([sys.executable, "-m", "bot.cli", "serve"], cwd=REPO_ROOT, env=env, capture_output=True,
                         text=True, timeout=120)

    assert run.returncode == 2, run.stderr
    assert "TEAMS_ALLOW_ANONYMOUS" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "data" / "index.sqlite").exists()  # refused before the index was opened


def test_port_in_use_is_only_a_port_someone_listens_on(tmp_path) -> None:
    import socket

    from bot.server.server import port_in_use

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert port_in_use("127.0.0.1", port) and port_in_use("0.0.0.0", port)
    assert not port_in_use("127.0.0.1", port)
    assert not port_in_use("no-such-host.invalid", port)  # a name that does not resolve is run_app's to report
