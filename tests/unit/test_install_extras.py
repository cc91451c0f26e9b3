"""The product install holds the product: the test tools are the `test` extra, which only scripts/test.sh installs
(the demo's `.venv` stays free of pytest, playwright and kubernetes-validate)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_TOOLS = ("pytest", "pytest-asyncio", "respx", "ruff", "microsoft-agents-testing", "playwright",
              "kubernetes-validate")


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[;~ ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_product_dependencies_hold_no_test_tool():
    assert names(project()["dependencies"]).isdisjoint(TEST_TOOLS)


def test_the_test_extra_holds_every_test_tool_and_dev_is_its_alias():
    extras = project()["optional-dependencies"]
    assert set(TEST_TOOLS) <= names(extras["test"])
    assert extras["dev"] == ["regbot[test]"]


def run_setup(tmp_path: Path, *args: str) -> str:
    """scripts/setup.sh in a copy whose .venv/bin/python only records what pip was asked to install."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup.sh").write_text((ROOT / "scripts" / "setup.sh").read_text())
    (tmp_path / "pyproject.toml").write_text("")
    fake = tmp_path / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/../pip.log"\n')
    fake.chmod(0o755)
    subprocess.run(["bash", "scripts/setup.sh", *args], cwd=tmp_path, check=True, capture_output=True)
    return (tmp_path / ".venv" / "pip.log").read_text()


def test_setup_installs_the_product_only_and_test_adds_the_extra_with_its_own_stamp(tmp_path):
    log = run_setup(tmp_path)
    assert "install --quiet -e ." in log and "[test]" not in log
    log = run_setup_again(tmp_path, "--test")
    assert log.count("-e .[test]") == 1
    assert run_setup_again(tmp_path) == log  # both stamps fresh: nothing reinstalled either way
    assert run_setup_again(tmp_path, "--test") == log


def run_setup_again(tmp_path: Path, *args: str) -> str:
    subprocess.run(["bash", "scripts/setup.sh", *args], cwd=tmp_path, check=True, capture_output=True)
    return (tmp_path / ".venv" / "pip.log").read_text()


def test_the_test_script_installs_the_test_extra_and_the_demo_does_not():
    assert "bash scripts/setup.sh --test" in (ROOT / "scripts" / "test.sh").read_text()
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert "bash scripts/setup.sh\n" in demo and "--test" not in demo
