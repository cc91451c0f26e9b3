"""Offline query analysis: NFC, colloquial-word expansion from an editable table, regulation names mentioned."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from rag.retrieval.tokenizer import Tokenizer
from rag.text import normalize_text

DEFAULT_SYNONYMS = Path(__file__).resolve().parent.parent / "data" / "synonyms.yaml"


def load_synonyms(path: Path = DEFAULT_SYNONYMS) -> dict[str, list[str]]:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    return {str(k): [str(v) for v in (vs if isinstance(vs, list) else [vs])] for k, vs in data.items()}


class AnalyzedQuery(BaseModel):
    """A query ready for retrieval: its own tokens and the expansion tokens from the synonym table."""

    model_config = ConfigDict(frozen=True)

    text: str
    tokens: tuple[str, ...]
    expansion: tuple[str, ...] = ()

    @property
    def lexical_tokens(self) -> list[str]:
        return list(self.tokens) + [t for t in self.expansion if t not in self.tokens]

    @property
    def dense_text(self) -> str:
        extra = " ".join(dict.fromkeys(t for t in self.expansion if t not in self.text))
        return f"{self.text} {extra}".strip()


class QueryAnalyzer:
    """Tokenises a query and adds the regulation terms for colloquial words (야근 → 연장근로)."""

    def __init__(self, tokenizer: Tokenizer, synonyms: dict[str, list[str]] | None = None) -> None:
        self.tokenizer = tokenizer
        self.synonyms = synonyms if synonyms is not None else load_synonyms()
        self._expansion_tokens = {word: tokenizer.tokens(" ".join(terms)) for word, terms in self.synonyms.items()}

    def analyze(self, text: str) -> AnalyzedQuery:
        text = normalize_text(text).strip()
        tokens = self.tokenizer.tokens(text)
        compact = text.replace(" ", "")
        expansion: list[str] = []
        for word, terms in self._expansion_tokens.items():
            if word in tokens or word in compact:
                expansion.extend(terms)
        return AnalyzedQuery(text=text, tokens=tuple(tokens), expansion=tuple(dict.fromkeys(expansion)))
