"""Headless Chromium (Debian's /usr/bin/chromium) driven by Playwright, for the playground browser tests.

Playwright never downloads a browser here (`playwright install` is not used): it drives the system Chromium.
The tests skip with a reason when Chromium or the playwright package is missing (fail under CI=true).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testkit import REPO_ROOT, missing

CHROMIUM = Path("/usr/bin/chromium")
# --headless is added by Playwright itself (headless=True); the rest keep Chromium off the network and quiet.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO_ROOT / "test-artifacts"


def _chromium_missing() -> str:
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        return missing("chromium", "scripts/system-deps.sh installs the Debian chromium package")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return missing("the playwright package", "pip install playwright; no browser download needed")
    return ""


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[object]:
    """One headless Chromium for the session; Playwright gives it a fresh temporary user-data-dir."""
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")),
            headless=True,
            args=CHROMIUM_FLAGS,
        )
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def browser_context(chromium) -> AsyncIterator[object]:
    """A fresh browser context per test: its own storage, so each test is a new browser to the playground."""
    context = await chromium.new_context(locale="ko-KR", viewport={"width": 1280, "height": 860})
    try:
        yield context
    finally:
        await context.close()


@pytest.fixture
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
