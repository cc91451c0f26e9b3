"""The article a citation names, as the side panel shows it: heading, chapter, paragraphs, source link."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from rag.models import Chunk


class ArticleView(BaseModel):
    """One article (or annex, or addenda) in document order, its parts joined and the repeated headers dropped."""

    model_config = ConfigDict(frozen=True)

    doc: str
    article: str = ""
    title: str = ""
    chapter: str = ""  # the innermost heading above the article: `제4장 휴일과 휴가`
    lines: tuple[str, ...] = ()  # paragraphs (①…) and items, one a line
    url: str = ""  # the source document, when it is a web address


def article_view(chunks: Sequence[Chunk]) -> ArticleView | None:
    """Join an article's chunks; None when there are none."""
    if not chunks:
        return None
    first = chunks[0]
    lines: list[str] = []
    for chunk in chunks:
        body = chunk.text
        # Every part starts with the article header (`취업규칙 제20조(연차유급휴가)`): the panel has a heading.
        header, _, rest = body.partition("\n")
        if chunk.article and header.startswith(chunk.label):
            body = rest
        lines.extend(line.rstrip() for line in body.splitlines() if line.strip())
    url = next((c.source_url for c in chunks if c.source_url.startswith(("https://", "http://"))), "")
    return ArticleView(
        doc=first.doc,
        article=first.article,
        title=first.title,
        chapter=first.chapter_path[-1] if first.chapter_path else first.chapter,
        lines=tuple(lines),
        url=url,
    )


__all__ = ["ArticleView", "article_view"]
