"""What must never be committed (issue 28): a local `.env` with tokens and secrets."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
@pytest.mark.parametrize(("path", "ignored"), [(".env", True), (".env.production", True), (".env.example", False)])
def test_local_env_files_are_ignored_and_the_example_is_not(path: str, ignored: bool) -> None:
    result = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False)

    assert (result.returncode == 0) is ignored
