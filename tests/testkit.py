"""Test helpers shared by every tier: a deterministic embedder, settings and a sample-corpus build."""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import socket
from collections.abc import Sequence
from pathlib import Path

from aiohttp import web

from bot.app import Components, build_components
from bot.config import Settings
from rag.retrieval.tokenizer import Tokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = REPO_ROOT / "samples"
# The evaluation corpus and sets beside the clone; REGBOT_SHARED_DIR points the suite at another copy (a worktree,
# or a copy with one article changed to check that the quality gates catch it).
SHARED = Path(os.environ.get("REGBOT_SHARED_DIR") or REPO_ROOT.parent / "shared").resolve()
KOLAW = SHARED / "corpus" / "ko-law"
EVAL_DIR = SHARED / "eval"

# A skip whose reason starts with this names a missing dependency; under CI=true tests/conftest.py turns it into a
# failure, so a CI run never passes with the Redis, browser or real-corpus tests quietly left out.
MISSING_DEPENDENCY = "missing dependency: "


def missing(dependency: str, hint: str) -> str:
    """The skip reason for a missing dependency (a failure under CI=true)."""
    return f"{MISSING_DEPENDENCY}{dependency} ({hint})"


SHARED_MISSING = missing(f"the shared corpus {SHARED}", "a fresh clone has no ../shared; set REGBOT_SHARED_DIR")


class HashingEmbedder:
    """Deterministic character-bigram hashing embedder: fast, no model, similar texts get similar vectors."""

    name = "test-hashing"
    dim = 256

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        compact = "".join(text.split())
        for a, b in itertools.pairwise(compact):
            digest = hashlib.blake2b(f"{a}{b}".encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def make_settings(data_dir: Path, **overrides) -> Settings:
    """Settings with no LLM, no platform secrets, and the given data dir."""
    values = {"REGBOT_DATA_DIR": str(data_dir), "REGBOT_LLM": "offline"}
    values.update(overrides)
    return Settings(**values)


def build_sample_components(data_dir: Path, tokenizer: Tokenizer, *, embedder=None, **overrides) -> Components:
    """Components over the bundled samples, ingested into `data_dir`."""
    components = build_components(make_settings(data_dir, **overrides), embedder=embedder or HashingEmbedder(),
                                  tokenizer=tokenizer)
    report = components.ingestor().ingest([SAMPLES])
    assert not report.failed, report.failed
    components.corpus.refresh()
    return components


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def serve_app(app: web.Application) -> tuple[str, web.AppRunner]:
    """Start `app` on a free port of 127.0.0.1: its base URL, and the runner to `cleanup()` when done."""
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return f"http://127.0.0.1:{port}", runner
