"""Neighbour expansion: the other paragraphs of a retrieved article, and the articles it cites by number.

A long article is split into parts, and the part a question matched often refers to a paragraph in another
part ("제1항에 따른…") or to another article ("법 제46조", "「근로기준법」 제2조"). The answer stage needs that
text; the retriever's ranking does not, so expansion is a separate step the pipeline calls on its final hits.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.lang.reference import CITATION, article_of
from rag.models import Chunk, Hit, Scope
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.names import DocumentNames, load_aliases

_DECREE_SUFFIX = " 시행령"


class NeighbourExpander:
    """Adds, after the hits, the missing parts of their articles and the articles they cite (same scope)."""

    def __init__(self, corpus: IndexedCorpus, *, aliases: dict[str, str] | None = None) -> None:
        self.corpus = corpus
        self.aliases = aliases if aliases is not None else load_aliases()
        self._version = -2
        self._by_article: dict[tuple[str, str], list[Chunk]] = {}
        self._names: DocumentNames | None = None
        self._citing: dict[tuple[str, str], list[Chunk]] = {}
        self._citing_version = -2

    def expand(self, hits: Sequence[Hit], *, scope: Scope | None = None, parts: bool = True,
               citations: bool = True, max_added: int = 8) -> list[Hit]:
        """The hits, then up to `max_added` neighbours (sibling parts first, then cited articles)."""
        self._index()
        allowed = set(scope.collections) if scope and scope.collections else set()
        present = {h.chunk.chunk_id for h in hits}
        floor = min((h.score for h in hits), default=0.0)
        added: list[Hit] = []

        def add(chunk: Chunk, reason: str) -> None:
            if len(added) >= max_added or chunk.chunk_id in present or chunk.deleted:
                return
            if allowed and chunk.collection not in allowed:
                return
            present.add(chunk.chunk_id)
            added.append(Hit(chunk=chunk, score=floor - 0.001 * (len(added) + 1), ranks={reason: len(added) + 1}))

        if parts:
            for hit in hits:
                for sibling in self.parts_of(hit.chunk):
                    add(sibling, "article_part")
        if citations:
            for hit in hits:
                for cited in self.cited_by(hit.chunk):
                    add(cited, "cited")
        return [*hits, *added]

    def parts_of(self, chunk: Chunk) -> list[Chunk]:
        """The article's other parts, in order."""
        self._index()
        if not chunk.article:
            return []
        return [c for c in self._by_article.get((chunk.doc, chunk.article), []) if c.chunk_id != chunk.chunk_id]

    def cited_by(self, chunk: Chunk) -> list[Chunk]:
        """First parts of the articles the chunk's text cites, in order of mention (not itself)."""
        self._index()
        found: list[Chunk] = []
        seen: set[tuple[str, str]] = {(chunk.doc, chunk.article)}
        body = chunk.text.partition("\n")[2]
        for match in CITATION.finditer(body):
            doc = self._cited_document(chunk.doc, match.group("named"), match.group("law"))
            if not doc:
                continue
            label = article_of(match.group("number"), match.group("branch"))
            if (doc, label) in seen:
                continue
            seen.add((doc, label))
            target = self._by_article.get((doc, label))
            if target:
                found.append(target[0])
        return found

    def citing(self, doc: str, article: str) -> list[Chunk]:
        """The chunks that cite (doc, article) by number, in corpus order: the 시행령 articles implementing "법
        제55조", the 벌칙 article punishing a breach of it. Deleted text cites nothing."""
        self._index()
        if self._citing_version != self.corpus.version:
            citing: dict[tuple[str, str], list[Chunk]] = {}
            for chunk in self.corpus.chunks:
                if not chunk.deleted:
                    for cited in self.cited_by(chunk):
                        citing.setdefault((cited.doc, cited.article), []).append(chunk)
            self._citing, self._citing_version = citing, self.corpus.version
        return list(self._citing.get((doc, article), ()))

    def implementing(self, doc: str, article: str) -> list[Chunk]:
        """The articles of the law's own decree or rule (「근로기준법 시행령」 for 근로기준법) that cite the article:
        where its details are ("법 제55조제1항에 따른 유급휴일은 …")."""
        return [c for c in self.citing(doc, article)
                if c.kind == "article" and c.doc != doc and c.doc.startswith(doc)]

    def _cited_document(self, doc: str, named: str | None, law: str | None) -> str:
        if named:
            assert self._names is not None
            return self._names.resolve(named).doc  # "" for a law outside the corpus
        if law:
            law = law.strip().replace(" ", "")
            if law in ("법", "같은법") and doc.endswith(_DECREE_SUFFIX):
                return doc[: -len(_DECREE_SUFFIX)]
            if law in ("영", "시행령") and not doc.endswith(_DECREE_SUFFIX):
                decree = doc + _DECREE_SUFFIX
                return decree if any(d == decree for d, _ in self._by_article) else ""
            if law in ("법", "같은법"):
                return doc
        return doc

    def _index(self) -> None:
        if self._version == self.corpus.version and self._names is not None:
            return
        by_article: dict[tuple[str, str], list[Chunk]] = {}
        for chunk in self.corpus.chunks:
            if chunk.article:
                by_article.setdefault((chunk.doc, chunk.article), []).append(chunk)
        for parts in by_article.values():
            parts.sort(key=lambda c: c.part)
        self._by_article = by_article
        self._names = DocumentNames(self.corpus.documents(), aliases=self.aliases)
        self._version = self.corpus.version
