"""Kiwi-based tokens for BM25: nouns, verb/adjective stems, numbers with units, foreign words."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from rag.lang.stopwords import STOP_NOUNS, STOP_STEMS
from rag.text import normalize_text

log = logging.getLogger(__name__)

DEFAULT_USER_DICTIONARY = Path(__file__).resolve().parent.parent / "data" / "user_dictionary.txt"
# Bump when the tokens for the same text change, so stored chunk tokens are recomputed on the next ingest.
TOKENIZER_VERSION = "2"

# Tags kept as content tokens (Sejong tag set as Kiwi reports it).
_NOUNS = {"NNG", "NNP", "NR", "SL", "SH", "XR"}
_STEMS = {"VV", "VA", "VV-R", "VA-R", "VV-I", "VA-I"}
# The stop stems and nouns are language data: `rag.lang.stopwords`.


class Tokenizer(Protocol):
    def tokens(self, text: str) -> list[str]: ...

    def tokens_many(self, texts: Sequence[str]) -> list[list[str]]: ...


def load_user_dictionary(path: Path = DEFAULT_USER_DICTIONARY) -> list[tuple[str, str]]:
    """(word, tag) pairs from an editable file: one word a line, optionally `word<TAB or space>TAG`, # comments."""
    entries: list[tuple[str, str]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        word = normalize_text(parts[0])
        tag = parts[1] if len(parts) > 1 else "NNG"
        entries.append((word, tag))
    return entries


_PARTS_CACHE = "kiwi_user_words.json"


def _parts_key(entries: Sequence[tuple[str, str]]) -> str:
    from kiwipiepy import __version__ as kiwi_version

    payload = json.dumps([kiwi_version, TOKENIZER_VERSION, list(entries)], ensure_ascii=False)
    return hashlib.sha1(payload.encode()).hexdigest()


def _read_parts(path: Path, key: str, count: int) -> list[list[str]] | None:
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    parts = saved.get("parts") if isinstance(saved, dict) and saved.get("key") == key else None
    return parts if isinstance(parts, list) and len(parts) == count else None


def _write_parts(path: Path, key: str, parts: list[list[str]]) -> None:
    if not path.parent.is_dir():
        return  # a read command never creates the data dir
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"key": key, "parts": parts}, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.warning("Kiwi user-word cache not written (%s); it is rebuilt at the next start", exc)


class KiwiTokenizer:
    """Turns Korean text into BM25 tokens.

    Compound nouns are kept whole and split: 연차유급휴가 → 연차, 유급, 휴가, 연차유급휴가 — so both a
    user's "연차" and a title's "연차유급휴가" match. Numbers keep their unit (15일, 8시간). Words of the
    user dictionary (regulation terms and workplace slang Kiwi mis-splits: 육휴, 투잡) are always one morpheme,
    and still yield their parts. `cache_dir` (the data dir) keeps those parts between runs, so start-up builds
    Kiwi's model once instead of twice.
    """

    def __init__(self, kiwi: object | None = None, *,
                 user_words: Sequence[str] | Sequence[tuple[str, str]] | None = None,
                 cache_dir: Path | None = None, cache_size: int = 4096) -> None:
        self._kiwi = kiwi
        self._user_words = user_words
        self._cache_dir = cache_dir
        # Recent texts' tokens: a turn tokenises the same hit texts in the grader, the generator and the verifier
        # (Kiwi was ~60% of the offline pipeline's time, most of it on texts already seen).
        self.cache_size = cache_size
        self._recent: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._ready = False

    @property
    def loaded(self) -> bool:
        """Whether Kiwi has been built (it is, at the first text tokenised)."""
        return self._ready

    @property
    def kiwi(self):
        """Kiwi with the user dictionary, built at first use (~1.3 s): an ingest with nothing to do, or a
        command that fails on its input, never pays for it."""
        if not self._ready:
            with self._lock:
                if not self._ready:
                    if self._kiwi is None:
                        from kiwipiepy import Kiwi

                        # Kiwi's multi-word dictionary is ~2/3 of its start-up (9 s → 2.5 s on a busy 2-core
                        # host) and changed no token of the ko-law corpus, the dev questions or the samples.
                        self._kiwi = Kiwi(load_multi_dict=False)
                    words = self._user_words
                    entries = [(normalize_text(w), t) for w, t in (load_user_dictionary() if words is None else [
                        (w, "NNG") if isinstance(w, str) else (w[0], w[1]) for w in words])]
                    cache = self._cache_dir / _PARTS_CACHE if self._cache_dir is not None else None
                    self._add_user_words(self._kiwi, entries, cache)
                    self._ready = True
        return self._kiwi

    @staticmethod
    def _add_user_words(kiwi, entries: Sequence[tuple[str, str]], cache: Path | None) -> None:
        # Kiwi rebuilds its model (seconds) at the first analysis after its dictionary changed. The parts of
        # each word must come from an analysis *before* the words are added (so 연차유급휴가 still splits into
        # 연차/유급/휴가): that costs a second build, unless the parts are read from the cache beside the index.
        key = _parts_key(entries)
        parts = _read_parts(cache, key, len(entries)) if cache is not None else None
        if parts is None:
            analysed = kiwi.tokenize([w for w, _ in entries]) if entries else []
            parts = [[m.form for m in morphs if m.tag in ("NNG", "NNP") and m.form != word and len(m.form) > 1]
                     for (word, _), morphs in zip(entries, analysed, strict=True)]
            if cache is not None:
                _write_parts(cache, key, parts)
        for (word, tag), word_parts in zip(entries, parts, strict=True):
            kiwi.add_user_word(word, tag, 0.0, user_value=word_parts)

    def tokens(self, text: str) -> list[str]:
        return self.tokens_many([text])[0]

    def tokens_many(self, texts: Sequence[str]) -> list[list[str]]:
        keys = [normalize_text(t) for t in texts]
        found: dict[str, tuple[str, ...]] = {}
        with self._lock:
            for key in keys:
                cached = self._recent.get(key)
                if cached is not None:
                    self._recent.move_to_end(key)
                    found[key] = cached
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            results = self.kiwi.tokenize(missing)  # type: ignore[attr-defined]
            fresh = {key: tuple(self._select(morphs)) for key, morphs in zip(missing, results, strict=True)}
            found.update(fresh)
            if self.cache_size:
                with self._lock:
                    self._recent.update(fresh)
                    while len(self._recent) > self.cache_size:
                        self._recent.popitem(last=False)
        return [list(found[key]) for key in keys]

    @staticmethod
    def _select(morphs: Sequence) -> list[str]:
        out: list[str] = []
        compound: list[str] = []
        compound_end = -1
        previous = None

        def flush() -> None:
            if len(compound) > 1:
                out.append("".join(compound))
            compound.clear()

        for morph in morphs:
            form, tag = morph.form, morph.tag
            adjacent = morph.start == compound_end
            if tag in ("NNG", "NNP"):
                if not adjacent:
                    flush()
                compound.append(form)
                compound_end = morph.start + morph.len
                if form not in STOP_NOUNS:
                    out.append(form)
                    parts = getattr(morph, "user_value", None)
                    if isinstance(parts, list):
                        out.extend(parts)
            else:
                flush()
                compound_end = -1
                if tag in _NOUNS and form not in STOP_NOUNS:
                    out.append(form.lower())
                elif tag in _STEMS and form not in STOP_STEMS:
                    out.append(form + "다")
                elif tag == "NNB" and previous is not None and previous.tag == "SN":
                    out.append(previous.form + form)  # 15 + 일 → 15일
                elif tag == "SN":
                    out.append(form)
            previous = morph
        flush()
        return out
