"""Resolves what a user calls a regulation (spacing, 「」, NFD, abbreviations, file names) to indexed names."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from rag.lang.reference import SUBORDINATE
from rag.text import doc_key, split_rule_code

DEFAULT_ALIASES = Path(__file__).resolve().parent.parent / "data" / "aliases.yaml"


def load_aliases(path: Path = DEFAULT_ALIASES) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    return {str(k): str(v) for k, v in data.items()}


class NameMatch(BaseModel):
    """A resolved name: one document, or the candidates when the name is ambiguous."""

    model_config = ConfigDict(frozen=True)

    doc: str = ""
    candidates: tuple[str, ...] = ()


class DocumentNames:
    """Maps name keys (no spaces, NFC) to documents, with aliases and file stems."""

    def __init__(self, documents: Iterable[str], *, aliases: Mapping[str, str] | None = None,
                 file_stems: Mapping[str, str] | None = None, codes: Mapping[str, str] | None = None) -> None:
        self.documents = list(dict.fromkeys(documents))
        self.codes = dict(codes or {})  # rule code (3-1-24) → document
        by_key = {doc_key(d): d for d in self.documents}
        self.keys: dict[str, str] = dict(by_key)
        for doc in self.documents:  # "근로기준법(예시)" answers to "근로기준법" unless a document has that name
            bare = re.sub(r"(?<!\s)\s*+[(（][^()（）]*[)）]\s*$", "", doc)
            if bare != doc and doc_key(bare):
                self.keys.setdefault(doc_key(bare), doc)
        for stem, doc in (file_stems or {}).items():
            self.keys.setdefault(doc_key(stem), doc)
        for alias, target in (aliases or {}).items():
            if doc_key(target) in by_key:
                self.keys.setdefault(doc_key(alias), by_key[doc_key(target)])

    def resolve(self, name: str) -> NameMatch:
        key = doc_key(name)
        if not key:
            return NameMatch()
        if key in self.keys:
            return NameMatch(doc=self.keys[key])
        # "취업규칙" for "한빛 취업규칙": a unique document containing the name.
        partial = sorted({doc for k, doc in self.keys.items() if key in k and len(key) >= 2})
        if len(partial) == 1:
            return NameMatch(doc=partial[0])
        return NameMatch(candidates=tuple(partial))

    def longest_prefix(self, text: str) -> tuple[str, str]:
        """The longest known name that `text` starts with (ignoring spaces): (document, rest of text).

        A name followed by 시행령/시행규칙 ("근기법 시행령 30조") names that decree or rule of the law when it is
        indexed, so no alias is needed per decree. A known rule code ("3-1-24", "규정 제3-1-24호") names its
        regulation."""
        code, after = split_rule_code(text)
        if code and code in self.codes:
            return self.codes[code], after
        doc, rest = self._longest_prefix(text)
        if doc:
            match = SUBORDINATE.match(rest)
            if match:
                wanted = doc_key(f"{doc} {match.group(1)}")
                subordinate = self.keys.get(wanted)
                if subordinate:
                    return subordinate, rest[match.end():]
        return doc, rest

    def _longest_prefix(self, text: str) -> tuple[str, str]:
        compact_positions = [i for i, ch in enumerate(text) if not ch.isspace()]
        best: tuple[str, str] = ("", text)
        best_len = 0
        for key, doc in self.keys.items():
            if len(key) <= best_len or len(compact_positions) < len(key):
                continue
            if doc_key(text[: compact_positions[len(key) - 1] + 1]) == key:
                best, best_len = (doc, text[compact_positions[len(key) - 1] + 1 :]), len(key)
        return best
