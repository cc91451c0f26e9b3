"""Root test configuration; it runs before any test module is imported.

anthropic 2.x sends over `httpx2`. Aliasing `httpx` to `httpx2` here, before anything imports
httpx, makes respx (which patches `httpx`) intercept the SDK's requests as well as ours. respx's
pytest plugin is therefore disabled as an entry point (`-p no:respx` in addopts) and loaded below,
after the alias, so its `respx_mock` fixture patches the aliased module.
"""

import httpx2

httpx2.alias_httpx()

pytest_plugins = ["respx.plugin"]

import os  # noqa: E402

import pytest  # noqa: E402

# Tests never talk to real platforms or a real LLM: drop any credentials the shell carries. REGBOT_SHARED_DIR is
# the suite's own (where the evaluation corpus is), not a product setting.
for _name in list(os.environ):
    if _name == "REGBOT_SHARED_DIR":
        continue
    if _name.startswith(("SLACK_", "ANTHROPIC_", "OPENAI_", "MICROSOFT_", "REGBOT_", "REDIS_URL", "CHROMA_URL")):
        del os.environ[_name]

IN_CI = os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true a test skipped for a missing dependency (redis-server, Chromium, ../shared: reasons made by
    `testkit.missing`) fails instead, naming it: a green CI run has run every tier."""
    outcome = yield
    report = outcome.get_result()
    if not (IN_CI and report.skipped) or hasattr(report, "wasxfail"):
        return
    from testkit import MISSING_DEPENDENCY

    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if MISSING_DEPENDENCY in reason:
        report.outcome = "failed"
        report.longrepr = f"CI=true and a test dependency is missing: {reason.removeprefix('Skipped: ')}"


@pytest.fixture(scope="session")
def kiwi_tokenizer():
    """Kiwi takes ~2 s to load: one tokenizer for the whole session."""
    from rag.retrieval.tokenizer import KiwiTokenizer

    tokenizer = KiwiTokenizer()
    tokenizer.tokens("준비")
    return tokenizer


@pytest.fixture(scope="session")
def sample_components(kiwi_tokenizer, tmp_path_factory):
    """The bundled samples ingested once (deterministic embedder, embedded Chroma), shared read-only."""
    from testkit import build_sample_components

    return build_sample_components(tmp_path_factory.mktemp("samples-index"), kiwi_tokenizer)
