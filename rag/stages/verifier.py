"""Verifier: each cited sentence must be supported by the source it cites; unsupported ones are removed."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from rag.models import Citation
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.tokenizer import Tokenizer

_MARKER = re.compile(r"\[(\d+)\]")


class VerificationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # the answer with unsupported sentences removed
    supported: bool  # False when something had to be removed
    removed: tuple[str, ...] = ()


class OfflineVerifier:
    """Token support check: a cited sentence passes when most of its content words appear in its sources."""

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, min_support: float = 0.5) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.min_support = min_support

    async def run(self, text: str, citations: tuple[Citation, ...]) -> VerificationResult:
        by_index = {c.index: c for c in citations}
        kept: list[str] = []
        removed: list[str] = []
        for line in text.split("\n"):
            markers = [int(m) for m in _MARKER.findall(line)]
            if not markers:
                kept.append(line)
                continue
            sources = [by_index[m] for m in markers if m in by_index]
            if sources and self.supported(_MARKER.sub("", line), sources):
                kept.append(line)
            else:
                removed.append(line)
        return VerificationResult(text="\n".join(kept), supported=not removed, removed=tuple(removed))

    def supported(self, sentence: str, sources: list[Citation]) -> bool:
        words = {t for t in self.tokenizer.tokens(sentence) if len(t) > 1}
        if not words:
            return True
        source_text = " ".join(self._source_text(c) for c in sources)
        found = set(self.tokenizer.tokens(source_text))
        return len(words & found) / len(words) >= self.min_support

    def _source_text(self, citation: Citation) -> str:
        chunk = self.corpus.get(citation.chunk_id)
        return f"{citation.doc} {citation.article} {citation.title} " + (chunk.text if chunk else citation.quote)
