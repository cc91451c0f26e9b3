"""Turns a ParsedDocument into chunks: one per article, long articles split by paragraph."""

from __future__ import annotations

import hashlib
from collections import Counter

from rag.knowledge.parser import ParsedArticle, ParsedDocument, ParsedParagraph
from rag.models import Chunk, paragraph_number
from rag.text import strip_markup


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def article_header(doc: str, article: ParsedArticle) -> str:
    """`근로기준법 제60조(연차 유급휴가)` — repeated at the top of every part of the article."""
    if article.kind == "addenda":
        return f"{doc} {article.title or '부칙'}"
    if article.kind in ("annex", "form"):
        return f"{doc} {article.article}".strip()
    head = f"{doc} {article.article}".strip()
    return f"{head}({article.title})" if article.title else head


class ArticleChunker:
    """One chunk per article; an article longer than `max_chars` is split between paragraphs.

    `max_chars` keeps a chunk inside the e5 model's 512-token window (Korean runs ~1.3 chars a token).
    """

    def __init__(self, *, max_chars: int = 700) -> None:
        if max_chars < 100:
            raise ValueError("max_chars must be at least 100 so a paragraph and its header fit")
        self.max_chars = max_chars

    def chunk(self, parsed: ParsedDocument, *, collection: str = "default", source_path: str = "",
              audience: str = "", domain: str = "") -> list[Chunk]:
        chunks: list[Chunk] = []
        seen: Counter[str] = Counter()
        for article in parsed.articles:
            occurrence = seen[article.article]
            seen[article.article] += 1
            header = strip_markup(article_header(parsed.doc, article))
            for part, paragraphs in enumerate(self.split(article.paragraphs, len(header))):
                # Markup remnants of the source (<img>…</img>, &lt;) never reach the index, a quote or a prompt.
                body = strip_markup("\n".join(p.text for p in paragraphs)).strip()
                text = f"{header}\n{body}" if body else header
                key = f"{collection}|{parsed.doc}|{article.article}|{occurrence}|{part}"
                chunks.append(Chunk(
                    chunk_id=hashlib.sha1(key.encode("utf-8")).hexdigest()[:24],
                    doc=parsed.doc,
                    article=article.article,
                    title=strip_markup(article.title),
                    text=text,
                    chapter=article.chapter,
                    chapter_path=article.chapter_path,
                    paragraphs=tuple(p.marker for p in paragraphs if paragraph_number(p.marker)),
                    part=part,
                    kind=article.kind,  # type: ignore[arg-type]
                    deleted=article.deleted,
                    page=article.page,
                    effective_date=parsed.effective_date,
                    rule_code=parsed.rule_code,
                    status=parsed.status,
                    audience=audience,
                    domain=domain,
                    collection=collection,
                    source_url=article.url or parsed.source_url,
                    source_path=source_path,
                    content_hash=content_hash(text),
                ))
        return chunks

    def split(self, paragraphs: list[ParsedParagraph], header_len: int) -> list[list[ParsedParagraph]]:
        """Greedy groups of whole paragraphs under the size limit; an oversized paragraph is cut by sentence."""
        budget = self.max_chars - header_len
        groups: list[list[ParsedParagraph]] = []
        current: list[ParsedParagraph] = []
        size = 0
        for paragraph in self.cut_oversized(paragraphs, budget):
            length = len(paragraph.text) + 1
            if current and size + length > budget:
                groups.append(current)
                current, size = [], 0
            current.append(paragraph)
            size += length
        if current or not groups:
            groups.append(current)
        return groups

    @staticmethod
    def cut_oversized(paragraphs: list[ParsedParagraph], budget: int) -> list[ParsedParagraph]:
        out: list[ParsedParagraph] = []
        for paragraph in paragraphs:
            if len(paragraph.text) <= budget:
                out.append(paragraph)
                continue
            piece = ""
            for line in paragraph.text.split("\n"):
                while len(line) > budget:
                    if piece:
                        out.append(ParsedParagraph(paragraph.marker, piece))
                        piece = ""
                    out.append(ParsedParagraph(paragraph.marker, line[:budget]))
                    line = line[budget:]
                if piece and len(piece) + len(line) + 1 > budget:
                    out.append(ParsedParagraph(paragraph.marker, piece))
                    piece = ""
                piece = f"{piece}\n{line}" if piece else line
            if piece:
                out.append(ParsedParagraph(paragraph.marker, piece))
        return out
