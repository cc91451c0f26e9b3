"""Lexical index: BM25 (bm25s) over Kiwi tokens, with the article title as a second, weighted field.

Built from the tokens the chunk store keeps (tokenised once, at ingest) and saved beside the store, so a restart
with an unchanged store loads it instead of rebuilding.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import bm25s
import numpy as np

# bm25s sets its logger to DEBUG with its own handler when imported: quiet it once, right after the import.
logging.getLogger("bm25s").setLevel(logging.WARNING)
log = logging.getLogger(__name__)

_EMPTY = "∅"  # bm25s needs at least one token per document


class _Field:
    """One BM25 field over all chunks."""

    def __init__(self, tokens: Sequence[Sequence[str]] | None, *, k1: float, b: float, retriever=None) -> None:
        if retriever is not None:
            self.retriever = retriever
            return
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index([list(t) or [_EMPTY] for t in tokens or []], show_progress=False)

    def scores(self, groups: Mapping[float, list[str]], size: int) -> np.ndarray:
        total = np.zeros(size, dtype=np.float32)
        vocab = self.retriever.vocab_dict
        for weight, tokens in groups.items():
            known = [t for t in tokens if t in vocab]
            if known and weight:
                total += weight * self.retriever.get_scores(known)
        return total


class LexicalIndex:
    """BM25 over pre-tokenised chunks; score = body BM25 + `title_weight` × title BM25.

    `search` can be limited to a subset by a boolean mask; query tokens may carry weights (own words 1.0,
    synonym expansions and earlier-turn words less).
    """

    def __init__(self, chunk_ids: Sequence[str], tokens: Sequence[Sequence[str]], *,
                 titles: Sequence[Sequence[str]] | None = None, k1: float = 1.2, b: float = 0.75,
                 title_weight: float = 1.0) -> None:
        self.chunk_ids = list(chunk_ids)
        self.title_weight = title_weight
        self.body: _Field | None = None
        self.title: _Field | None = None
        if self.chunk_ids:
            self.body = _Field(tokens, k1=k1, b=b)
            if titles is not None:
                # Titles are a few words: little length normalisation, and a repeated word barely counts twice.
                self.title = _Field(titles, k1=0.9, b=0.3)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def doc_freq(self) -> dict[str, int]:
        """How many chunks' bodies hold each token, read from the index (no token lists needed)."""
        if self.body is None:
            return {}
        retriever = self.body.retriever
        counts = np.diff(np.asarray(retriever.scores["indptr"]))
        # bm25s also maps "" to an id past the last column.
        return {token: int(counts[i]) for token, i in retriever.vocab_dict.items()
                if i < len(counts) and token != _EMPTY}

    def scores(self, query: Sequence[str] | Mapping[str, float], *, title_weight: float | None = None
               ) -> np.ndarray:
        size = len(self.chunk_ids)
        if not size or not query or self.body is None:
            return np.zeros(size, dtype=np.float32)
        weighted = dict(query) if isinstance(query, Mapping) else dict.fromkeys(query, 1.0)
        groups: dict[float, list[str]] = {}
        for token, weight in weighted.items():
            groups.setdefault(float(weight), []).append(token)
        total = self.body.scores(groups, size)
        title_weight = self.title_weight if title_weight is None else title_weight
        if self.title is not None and title_weight:
            total += title_weight * self.title.scores(groups, size)
        return total

    def search(self, query: Sequence[str] | Mapping[str, float], k: int, *, mask: np.ndarray | None = None,
               title_weight: float | None = None) -> list[tuple[int, float]]:
        """(position, score) best first, only positive scores."""
        scores = self.scores(query, title_weight=title_weight)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        if not len(scores):
            return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]

    # --- persistence -------------------------------------------------------------------------------------------

    def save(self, directory: Path, *, key: str) -> None:
        """Write the index under `directory`, tagged with `key` (what it was built from).

        Replicas may share the data dir: each save writes a build directory of its own, then swaps the one-line
        `CURRENT` pointer with `os.replace`, so a reader sees the old index or the new one, never a mix or a half
        written file; a save that fails part-way leaves the old index in force.
        """
        directory.mkdir(parents=True, exist_ok=True)
        build = f"build-{os.getpid()}-{secrets.token_hex(4)}"
        target, pointer_tmp = directory / build, directory / f"{_POINTER}.{build}.tmp"
        previous = _current_build(directory)
        try:
            target.mkdir()
            if self.body is not None:
                self.body.retriever.save(str(target / "body"), show_progress=False)
            if self.title is not None:
                self.title.retriever.save(str(target / "title"), show_progress=False)
            meta = {"key": key, "chunk_ids": self.chunk_ids, "title_weight": self.title_weight}
            (target / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
            pointer_tmp.write_text(build, encoding="utf-8")
            os.replace(pointer_tmp, directory / _POINTER)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            pointer_tmp.unlink(missing_ok=True)
            raise
        _prune(directory, keep={build, previous})

    @classmethod
    def load(cls, directory: Path, *, key: str) -> LexicalIndex | None:
        """The saved index when it was built from `key`, else None."""
        build = _current_build(directory)
        if build is None:
            return None
        directory = directory / build
        try:
            meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if meta.get("key") != key:
            return None
        index = cls([], [], title_weight=float(meta.get("title_weight", 1.0)))
        index.chunk_ids = list(meta["chunk_ids"])
        try:
            if index.chunk_ids:
                # Memory-mapped: a start reads only the pages a query touches, and replicas share them.
                index.body = _Field(None, k1=0, b=0, retriever=bm25s.BM25.load(
                    str(directory / "body"), mmap=True, show_progress=False, verbosity=0))
                if (directory / "title").exists():
                    index.title = _Field(None, k1=0, b=0, retriever=bm25s.BM25.load(
                        str(directory / "title"), mmap=True, show_progress=False, verbosity=0))
        except (OSError, ValueError) as exc:
            log.warning("saved lexical index unreadable, rebuilding: %s", exc)
            return None
        return index


_POINTER = "CURRENT"  # names the build directory in force
# A build directory younger than this may be another replica's save in progress: never pruned. An index save
# takes seconds even at 200k chunks (benchmarks/scale.py), so an hour leaves a wide margin.
_PRUNE_AFTER_S = 3600.0


def _current_build(directory: Path) -> str | None:
    try:
        build = (directory / _POINTER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    # Only a name this module writes: a pointer edited by hand must not lead outside the index directory.
    return build if build.startswith("build-") and "/" not in build and build not in (".", "..") else None


def _prune(directory: Path, *, keep: set[str | None]) -> None:
    """Delete older builds (the previous one stays for readers that resolved the pointer just before the swap),
    stale pointer temporaries, and the files of the layout before builds (meta.json, body/, title/)."""
    cutoff = time.time() - _PRUNE_AFTER_S
    for entry in directory.iterdir():
        if entry.name in ("meta.json", "body", "title"):
            pass  # the single-directory layout of earlier releases
        elif entry.name in keep or entry.name == _POINTER:
            continue
        elif not entry.name.startswith(("build-", f"{_POINTER}.")):
            continue
        else:
            try:
                if entry.stat().st_mtime > cutoff:
                    continue
            except OSError:
                continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
