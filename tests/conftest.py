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

# Tests never talk to real platforms or a real LLM: drop any credentials the shell carries.
for _name in list(os.environ):
    if _name.startswith(("SLACK_", "ANTHROPIC_", "OPENAI_", "MICROSOFT_", "REGBOT_", "REDIS_URL", "CHROMA_URL")):
        del os.environ[_name]


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
