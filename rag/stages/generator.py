"""Generator: writes the cited answer. Offline it is extractive: it quotes the best paragraphs, each cited."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from pydantic import BaseModel, ConfigDict

from rag import messages
from rag.models import Citation, Hit
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.tokenizer import Tokenizer

_PARAGRAPH_START = re.compile(r"^([①-⑳])")


class GenerationInput(BaseModel):
    """The question, its parts (compound questions) and the evidence per part, best first."""

    model_config = ConfigDict(frozen=True)

    question: str
    sub_questions: tuple[str, ...] = ()
    evidence: tuple[tuple[Hit, ...], ...]  # one tuple per part (one part for a simple question)


class DraftAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    citations: tuple[Citation, ...]


def split_paragraphs(chunk_text: str) -> list[tuple[str, str]]:
    """(marker, text) for each 항 of a chunk's body; the header line is dropped."""
    lines = chunk_text.split("\n")[1:]
    out: list[tuple[str, str]] = []
    for line in lines:
        match = _PARAGRAPH_START.match(line)
        if match or not out:
            out.append((match.group(1) if match else "", line))
        else:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return [(m, t.strip()) for m, t in out if t.strip()]


class ExtractiveGenerator:
    """Quotes the paragraphs that share the most (IDF-weighted) words with the question, with [n] markers."""

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, hits_per_part: int = 2,
                 paragraphs_per_hit: int = 2, max_quote_chars: int = 400) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.hits_per_part = hits_per_part
        self.paragraphs_per_hit = paragraphs_per_hit
        self.max_quote_chars = max_quote_chars
        self._draft = DraftAnswer(text="", citations=())

    async def stream(self, request: GenerationInput) -> AsyncIterator[str]:
        """Streams the answer line by line; `finish()` then gives the same text with its citations."""
        self._draft = self.draft(request)
        for line in self._draft.text.splitlines(keepends=True):
            yield line

    def finish(self) -> DraftAnswer:
        return self._draft

    def draft(self, request: GenerationInput) -> DraftAnswer:
        citations: list[Citation] = []
        lines = [messages.EXTRACTIVE_INTRO, ""]
        parts = request.sub_questions or (request.question,)
        for part_question, hits in zip(parts, request.evidence, strict=False):
            if len(parts) > 1:
                lines.append(messages.EXTRACTIVE_PART.format(question=part_question))
            terms = {t: self.corpus.idf(t) for t in self.tokenizer.tokens(part_question) if len(t) > 1}
            for hit in hits[: self.hits_per_part]:
                for marker, text in self.best_paragraphs(hit, terms):
                    existing = next((c for c in citations if c.chunk_id == hit.chunk.chunk_id
                                     and c.paragraph == marker), None)
                    citation = existing or Citation(
                        index=len(citations) + 1, doc=hit.chunk.doc, article=hit.chunk.article, paragraph=marker,
                        title=hit.chunk.title, quote=text, url=hit.chunk.source_url, chunk_id=hit.chunk.chunk_id,
                        chapter=hit.chunk.chapter)
                    if existing is None:
                        citations.append(citation)
                    lines.append(f"- **{citation.label}**: \"{text}\" [{citation.index}]")
            lines.append("")
        return DraftAnswer(text="\n".join(lines).strip() + "\n", citations=tuple(citations))

    def best_paragraphs(self, hit: Hit, terms: dict[str, float]) -> list[tuple[str, str]]:
        paragraphs = split_paragraphs(hit.chunk.text)
        if not paragraphs:
            return []
        tokens = self.tokenizer.tokens_many([t for _, t in paragraphs])
        scored = sorted(range(len(paragraphs)),
                        key=lambda i: -sum(w for t, w in terms.items() if t in tokens[i]))
        chosen = sorted(scored[: self.paragraphs_per_hit])
        return [(paragraphs[i][0], self._trim(paragraphs[i][1])) for i in chosen]

    def _trim(self, text: str) -> str:
        text = re.sub(r"\s*<(개정|신설)[^>]*>", "", text).replace("\n", " ")
        return text if len(text) <= self.max_quote_chars else text[: self.max_quote_chars].rstrip() + "…"
