"""StructuralAnswerer: renders a lookup (article, chapter, annex, addenda, overview) as a cited answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag import messages
from rag.models import Chunk, Citation, Scope, cite_chunk, split_paragraphs
from rag.retrieval.lookup import LookupResult, StructuralLookup
from rag.stages.contracts import DraftAnswer
from rag.stages.followups import about_articles
from rag.text import ECHOED_CHARS, shorten

if TYPE_CHECKING:
    from rag.stages.changes import ChangeAnswerer

MAX_OUTLINE_LINES = 60
FULLTEXT_PAGE_CHARS = 3500  # one chat message (Slack sections and Teams cards stay readable at this size)


class StructuralAnswerer:
    """Answers exactly what a reference names, quoting the article text (or one 항 when named)."""

    def __init__(self, lookup: StructuralLookup, *, changes: ChangeAnswerer | None = None) -> None:
        self.lookup = lookup
        self.changes = changes  # "개정 내역" questions: answered from the change record

    async def run(self, query: str, scope: Scope | None = None) -> tuple[DraftAnswer, LookupResult]:
        if self.changes is not None and self.changes.asks(query):
            return await self.changes.run(query, scope)
        result = self.lookup.lookup(query, scope)
        return self.render(result, query), result

    def render(self, result: LookupResult, query: str) -> DraftAnswer:
        if result.kind == "ambiguous" and result.target:
            # Each regulation that holds the article is offered as a follow-up: one tap is the exact lookup.
            choices = tuple(f"{doc} {result.target}" for doc in result.candidates)
            text = messages.LOOKUP_CHOOSE.format(target=result.target, candidates=", ".join(result.candidates))
            return DraftAnswer(text=text, citations=(), followups=choices)
        if result.kind == "ambiguous":
            text = messages.LOOKUP_AMBIGUOUS.format(name=shorten(query, ECHOED_CHARS),
                                                    candidates=", ".join(result.candidates))
            return DraftAnswer(text=text, citations=())
        if result.kind == "not_found" and result.unindexed:
            text = messages.LOOKUP_DOC_NOT_INDEXED.format(doc=shorten(result.doc, ECHOED_CHARS))
            return DraftAnswer(text=text, citations=())
        if result.kind == "not_found" and result.target in ("시행령", "시행규칙"):
            text = messages.LOOKUP_DECREE_NOT_INDEXED.format(doc=result.doc, decree=result.target)
            return DraftAnswer(text=text, citations=(), followups=(f"{result.doc} 목차",))
        if result.kind == "not_found" or not result.chunks:
            return DraftAnswer(text=messages.LOOKUP_NOT_FOUND.format(query=shorten(query, ECHOED_CHARS)), citations=())
        if result.kind == "fulltext":
            return self._fulltext(result)
        if result.kind == "articles":
            return self._articles(result)
        first = result.chunks[0]
        citation = Citation(index=1, doc=result.doc, article=first.article if result.kind != "chapter" else "",
                            paragraph=result.paragraph, title=first.title, url=first.source_url,
                            chunk_id=first.chunk_id, chapter=first.chapter)
        if result.kind in ("overview", "chapter"):
            header = f"**{result.doc}**" if result.kind == "overview" else f"**{result.doc} {result.outline[0]}**"
            if result.kind == "overview" and first.rule_code:
                header += messages.RULE_CODE_SUFFIX.format(code=first.rule_code)
            body_lines = list(result.outline[1:] if result.kind == "chapter" else result.outline)
            if len(body_lines) > MAX_OUTLINE_LINES:
                more = messages.OUTLINE_MORE.format(count=len(body_lines) - MAX_OUTLINE_LINES)
                body_lines = [*body_lines[:MAX_OUTLINE_LINES], more]
            quote = first.text.split("\n", 1)[-1][:160]
            text = "\n".join([header, *body_lines]) + f"\n\n{first.label}: \"{quote}\" [1]\n"
            return DraftAnswer(text=text, citations=(citation.model_copy(update={"quote": quote}),))
        paragraphs: list[tuple[str, str]] = []
        for chunk in result.chunks:
            paragraphs.extend(split_paragraphs(chunk.text))
        if result.paragraph:
            paragraphs = [p for p in paragraphs if p[0] == result.paragraph] or paragraphs
        body = "\n".join(t for _, t in paragraphs)
        title = f"({first.title})" if first.title and result.kind == "article" else f" {first.title}"
        text = f"**{result.doc} {result.target}{title}** [1]\n{body}\n"
        return DraftAnswer(text=text, citations=(citation.model_copy(update={"quote": body[:300]}),),
                           followups=self._implementing(result) if result.kind == "article" else ())

    def _implementing(self, result: LookupResult, at_most: int = 2) -> tuple[str, ...]:
        """Buttons for the 시행령 articles that implement a law's article (its details), one tap each."""
        citations = self.lookup.citations
        if citations is None:
            return ()
        return about_articles("", citations.implementing(result.doc, result.target), at_most=at_most)

    @staticmethod
    def _articles(result: LookupResult) -> DraftAnswer:
        """Each listed article in the order asked, under its own header and citation."""
        sections: list[str] = []
        citations: list[Citation] = []
        for chunk in result.chunks:
            body = "\n".join(t for _, t in split_paragraphs(chunk.text))
            if citations and citations[-1].article == chunk.article:  # a later part of the same article
                sections[-1] += f"\n{body}"
                continue
            index = len(citations) + 1
            title = f"({chunk.title})" if chunk.title else ""
            sections.append(f"**{result.doc} {chunk.article}{title}** [{index}]\n{body}")
            citations.append(cite_chunk(chunk, index=index, quote=body[:300]))
        missing = [label for label in result.target.split(", ") if all(c.article != label for c in citations)]
        if missing:
            sections.append(messages.LOOKUP_MISSING.format(targets=", ".join(missing), doc=result.doc))
        return DraftAnswer(text="\n\n".join(sections) + "\n", citations=tuple(citations))

    @staticmethod
    def _fulltext(result: LookupResult) -> DraftAnswer:
        """One page of the whole text, cut at article boundaries, with how to ask for the next page."""
        pages: list[list[Chunk]] = [[]]
        size = 0
        for chunk in result.chunks:
            text = chunk.text if not chunk.part else chunk.text.partition("\n")[2]
            if pages[-1] and size + len(text) > FULLTEXT_PAGE_CHARS:
                pages.append([])
                size = 0
            pages[-1].append(chunk)
            size += len(text) + 1
        number = min(max(result.page, 1), len(pages))
        shown = pages[number - 1]
        body = "\n".join(c.text if not c.part else c.text.partition("\n")[2] for c in shown)
        header = messages.FULLTEXT_HEADER.format(doc=result.doc, page=number, pages=len(pages))
        lines = [f"{header} [1]", "", body.strip()]
        if number < len(pages):
            lines += ["", messages.FULLTEXT_NEXT.format(doc=result.doc, page=number + 1)]
        first = shown[0]
        citation = Citation(index=1, doc=result.doc, article=first.article, title=first.title, url=first.source_url,
                            chunk_id=first.chunk_id, chapter=first.chapter, quote=body[:300])
        return DraftAnswer(text="\n".join(lines) + "\n", citations=(citation,))
