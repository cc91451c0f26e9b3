"""scripts/system-deps.sh asks for a Hangul font whenever the machine has none, whether Chromium is installed or
not (run here as a non-root user, so it only says what it would install)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_with(tmp_path: Path, *, fonts: str, chromium: bool, ci: str = "") -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    commands = {"id": "echo 1000", "redis-server": "true", "fc-list": f"printf '{fonts}'"}
    if chromium:
        commands["chromium"] = "true"
    for name, body in commands.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    (bin_dir / "grep").symlink_to(shutil.which("grep"))
    # Nothing else on PATH: the machine's own chromium must not be found; CI only as the test asks.
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "PATH": str(bin_dir), **({"CI": ci} if ci else {})}
    run = subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "system-deps.sh")], env=env, capture_output=True,
                         text=True, timeout=60, check=not ci)
    return run.stderr if not ci else f"rc={run.returncode} {run.stderr}"


@pytest.mark.parametrize("chromium", [True, False])
def test_a_machine_without_a_hangul_font_gets_one(tmp_path, chromium):
    said = run_with(tmp_path, fonts="", chromium=chromium)
    assert "fonts-nanum" in said
    assert ("chromium" in said) is not chromium


def test_a_machine_with_everything_is_left_alone(tmp_path):
    assert run_with(tmp_path, fonts="/usr/share/fonts/nanum.ttf: NanumGothic\\n", chromium=True) == ""


def test_under_ci_a_font_that_cannot_be_installed_fails_the_run_naming_it(tmp_path):
    said = run_with(tmp_path, fonts="", chromium=True, ci="true")
    assert said.startswith("rc=1") and "fonts-nanum" in said
