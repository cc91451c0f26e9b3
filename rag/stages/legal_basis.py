"""Legal basis: an internal rule's answer shows the statute it rests on, a statute's answer the rules that
implement it ("관련 법령" / "관련 사내 규정", DESIGN §3 answer layout).

Offline and exact: a company rule that rests on a law names it ("「근로기준법」 제60조에 따른다"), so the link is
read from the text, not guessed by a search. Collections have roles (`CollectionRoles`): the rules of the
organisation (`internal`) and the statutes (`law`). The part holds at most `max_quotes` quotes, each with its own
citation, and only articles the turn's scope may see and the answer does not already cite.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from rag import messages
from rag.lang.reference import LAW_COLLECTION, NAMED_CITATION
from rag.models import Chunk, Citation, Scope, cite_chunk, split_paragraphs
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.tokenizer import Tokenizer


class CollectionRoles(BaseModel):
    """Which collections hold statutes (`law`); every other collection holds the organisation's own rules."""

    model_config = ConfigDict(frozen=True)

    law: tuple[str, ...] = ()  # empty: by name (law, laws, statutes, 법령, 법률 …)

    def is_law(self, collection: str) -> bool:
        return collection in self.law if self.law else bool(LAW_COLLECTION.search(collection))


class LegalPart(BaseModel):
    """The part appended to an answer: its heading and the quotes with their citations, numbered after the
    answer's own."""

    model_config = ConfigDict(frozen=True)

    heading: str
    citations: tuple[Citation, ...]

    def render(self) -> str:
        lines = [self.heading]
        lines += [f"- **{c.label}**: \"{c.quote}\" [{c.index}]" for c in self.citations]
        return "\n".join(lines)


class LegalBasis:
    """Finds the statutes an internal answer rests on, or the internal rules a statute answer is implemented by."""

    def __init__(self, corpus: IndexedCorpus, lookup: StructuralLookup, tokenizer: Tokenizer, *,
                 roles: CollectionRoles | None = None, max_quotes: int = 2, quote_chars: int = 300) -> None:
        self.corpus = corpus
        self.lookup = lookup
        self.tokenizer = tokenizer
        self.roles = roles or CollectionRoles()
        self.max_quotes = max_quotes
        self.quote_chars = quote_chars
        self._law: tuple[str, ...] = ()
        self._implementing: dict[tuple[str, str], list[Chunk]] = {}
        self._version = -1

    async def run(self, question: str, cited: Sequence[Citation], scope: Scope | None = None) -> LegalPart | None:
        """The part for an answer that cites `cited` (numbered from 1), or None when nothing applies."""
        chunks = [c for c in (self.corpus.get(x.chunk_id) for x in cited) if c is not None]
        if not chunks:
            return None
        already = {c.chunk_id for c in chunks}
        if self.roles.is_law(chunks[0].collection):
            heading, found = messages.RELATED_RULES, self._implementing_rules(chunks, scope)
        else:
            heading, found = messages.RELATED_LAW, self._statutes_cited_by(chunks, scope)
        found = [c for c in dict.fromkeys(found) if c.chunk_id not in already][: self.max_quotes]
        if not found:
            return None
        first = max(c.index for c in cited) + 1
        return LegalPart(heading=heading, citations=tuple(
            self._cite(chunk, question, index) for index, chunk in enumerate(found, start=first)))

    def _statutes_cited_by(self, chunks: Sequence[Chunk], scope: Scope | None) -> list[Chunk]:
        law_scope = self._law_scope(scope)
        if law_scope is None:
            return []
        found: list[Chunk] = []
        for chunk in chunks:
            for name, article, _ in NAMED_CITATION.findall(chunk.text):
                result = self.lookup.lookup(f"{name} {article}", law_scope)
                if result.kind == "article" and result.chunks:
                    found.append(result.chunks[0])
        return found

    def _implementing_rules(self, chunks: Sequence[Chunk], scope: Scope | None) -> list[Chunk]:
        allowed = set(scope.collections) if scope and scope.collections else None
        found: list[Chunk] = []
        for chunk in chunks:
            for rule in self._implementing_index().get((chunk.doc, chunk.article), []):
                if allowed is None or rule.collection in allowed:
                    found.append(rule)
        return found

    def _implementing_index(self) -> dict[tuple[str, str], list[Chunk]]:
        """(statute, article) → the internal chunks that cite it; rebuilt when the index changes."""
        self._refresh()
        return self._implementing

    def _law_collections(self) -> tuple[str, ...]:
        self._refresh()
        return self._law

    def _refresh(self) -> None:
        """Read the roles' collections and the internal rules' citations once per index version."""
        if self._version == self.corpus.version:
            return
        law = tuple(sorted({c.collection for c in self.corpus.chunks if self.roles.is_law(c.collection)}))
        index: dict[tuple[str, str], list[Chunk]] = {}
        for chunk in self.corpus.chunks if law else ():
            if self.roles.is_law(chunk.collection) or chunk.deleted or "「" not in chunk.text:
                continue
            for name, article, _ in NAMED_CITATION.findall(chunk.text):
                result = self.lookup.lookup(f"{name} {article}", Scope(collections=law))
                if result.kind == "article" and result.chunks:
                    index.setdefault((result.doc, result.target), []).append(chunk)
        self._law, self._implementing, self._version = law, index, self.corpus.version

    def _law_scope(self, scope: Scope | None) -> Scope | None:
        """The law collections the turn may see, or None when it may see none."""
        law = [c for c in self._law_collections() if not (scope and scope.collections) or c in scope.collections]
        return Scope(collections=tuple(law), audience=scope.audience if scope else "") if law else None

    def _cite(self, chunk: Chunk, question: str, index: int) -> Citation:
        """The paragraph of `chunk` that shares most words with the question (the first when none does)."""
        paragraphs = split_paragraphs(chunk.text) or [("", chunk.text)]
        wanted = set(self.tokenizer.tokens(question))
        tokens = self.tokenizer.tokens_many([text for _, text in paragraphs])
        best = max(range(len(paragraphs)), key=lambda i: (len(wanted & set(tokens[i])), -i))
        marker, text = paragraphs[best]
        quote = text if len(text) <= self.quote_chars else text[: self.quote_chars].rstrip() + "…"
        return cite_chunk(chunk, index=index, paragraph=marker, quote=quote)
