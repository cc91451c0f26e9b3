"""Korean regulation parser: text (Markdown headings or plain lines) → hierarchy, articles, paragraphs.

Handles 편/장/절/관, 조 with titles and 의N suffixes, 항 (①…⑳), 부칙 blocks with their own articles,
삭제 articles, 별표/별지 from the front matter's 첨부파일 list, and page positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.knowledge.loaders.base import LoadedDocument
from rag.lang.reference import (
    ADDENDA_HEADING,
    ANNEX_HEADING,
    ARTICLE_HEADING,
    DELETED_BODY,
    DIVISION_HEADING,
    DIVISION_RANK,
    chapter_of,
)
from rag.models import CIRCLED, article_label
from rag.text import normalize_text, split_rule_code, title_rule_code

_CIRCLED = CIRCLED
_HEADING_HASHES = re.compile(r"^#{1,6}\s*")
_PARAGRAPH = re.compile(rf"^\s*(?:\*\*)?([{_CIRCLED}])(?:\*\*)?\s*")


def clean_line(line: str) -> str:
    """Markdown escapes and bold marks removed; headings keep their text."""
    line = line.replace("\\.", ".").replace("\\-", "-").replace("\\*", "*")
    line = re.sub(r"\*\*([^*]+)\*\*", r"\1", line)
    return line.rstrip()


@dataclass
class ParsedParagraph:
    """One 항 (marker ①…) or the unnumbered body of an article (marker "")."""

    marker: str
    text: str


@dataclass
class ParsedArticle:
    """An article, an annex entry or an addenda block, with its place in the hierarchy."""

    article: str  # 제60조, 별표 2, 부칙
    title: str = ""
    chapter_path: tuple[str, ...] = ()
    paragraphs: list[ParsedParagraph] = field(default_factory=list)
    kind: str = "article"  # article | annex | form | addenda | text
    deleted: bool = False
    page: int | None = None
    url: str = ""
    offset: int = 0

    @property
    def chapter(self) -> str:
        """The 장 the article sits in (제4장), or ''."""
        return next((label for label in map(chapter_of, self.chapter_path) if label), "")

    @property
    def body(self) -> str:
        return "\n".join(p.text for p in self.paragraphs).strip()


@dataclass
class ParsedDocument:
    """A whole regulation: its name, metadata and articles in order."""

    doc: str
    front_matter: dict
    articles: list[ParsedArticle]
    divisions: list[tuple[str, ...]]  # every chapter path, in order, for overviews
    rule_code: str = ""  # 3-1-24: the front matter's 규정번호, else a number in the title

    @property
    def effective_date(self) -> str:
        return str(self.front_matter.get("시행일자") or "")

    @property
    def status(self) -> str:
        return str(self.front_matter.get("상태") or "")

    @property
    def source_url(self) -> str:
        return str(self.front_matter.get("출처") or "")


class RegulationParser:
    """Parses a LoadedDocument into a ParsedDocument."""

    def parse(self, loaded: LoadedDocument, *, fallback_name: str) -> ParsedDocument:
        title_code, doc = title_rule_code(normalize_text(loaded.title).strip() or fallback_name)
        declared, _ = split_rule_code(str(loaded.front_matter.get("규정번호") or ""))
        state = _ParseState(markdown=loaded.markdown_headings)
        offset = 0
        for raw in loaded.text.splitlines(keepends=True):
            state.feed(clean_line(raw.rstrip("\n")), raw.lstrip().startswith("#"), loaded.page_at(offset), offset)
            offset += len(raw)
        articles = state.finish()
        articles.extend(annexes_from_front_matter(loaded.front_matter))
        if not any(a.kind in ("article", "addenda") for a in articles):
            articles = [a for a in articles if a.kind != "text"] + plain_sections(loaded)
        return ParsedDocument(doc=doc, front_matter=loaded.front_matter, articles=articles,
                              divisions=state.divisions, rule_code=declared or title_code)


class _ParseState:
    """Line-by-line state machine; `markdown` documents open articles only at headings (outside 부칙)."""

    def __init__(self, *, markdown: bool) -> None:
        self.markdown = markdown
        self.path: list[tuple[int, str]] = []  # (rank, "제4장 근로시간과 휴식")
        self.divisions: list[tuple[str, ...]] = []
        self.articles: list[ParsedArticle] = []
        self.current: ParsedArticle | None = None
        self.in_addenda = False
        self.addenda_block: ParsedArticle | None = None
        self.last_key: tuple[int, int] = (0, 0)
        self.preamble: list[str] = []

    # -- line dispatch -------------------------------------------------------

    def feed(self, line: str, is_heading: bool, page: int | None, offset: int) -> None:
        text = _HEADING_HASHES.sub("", line).strip() if is_heading else line.strip()
        if not text:
            return
        if ADDENDA_HEADING.match(text) and (is_heading or len(text) < 40):
            self.open_addenda(text, page, offset)
            return
        if self.in_addenda:
            self.feed_addenda(text, page, offset)
            return
        division = DIVISION_HEADING.match(text)
        if division and (is_heading or (not self.markdown and len(text) < 50 and not text.endswith("."))):
            self.open_division(division, text)
            return
        article = ARTICLE_HEADING.match(text)
        if article and self.accepts_article(article, is_heading):
            self.open_article(article, page, offset)
            return
        annex = ANNEX_HEADING.match(text)
        if annex and (is_heading or text.startswith("[")):
            self.close_article()
            kind = "annex" if annex.group(1) == "별표" else "form"
            label = f"{annex.group(1)} {annex.group(2)}" + (f"의{annex.group(3)}" if annex.group(3) else "")
            self.current = ParsedArticle(article=label, title=annex.group(4).strip(" []"), kind=kind,
                                         chapter_path=self.chapter_path(), page=page, offset=offset)
            return
        if self.current is None:
            if is_heading and line.startswith("# "):
                return
            self.preamble.append(text)
            return
        self.add_body(self.current, text)

    def accepts_article(self, match: re.Match, is_heading: bool) -> bool:
        if self.markdown:
            return is_heading
        # Plain text: a line like "제2조제1항에 따른 …" is a reference, not a header.
        rest = match.group(4) or ""
        if rest.startswith(("제", "에", "의", "부터", "및", "또는", "·", "ㆍ", ",")) and not match.group(3):
            return False
        key = (int(match.group(1)), int(match.group(2) or 0))
        return key > self.last_key and key[0] <= self.last_key[0] + 20

    # -- structure -----------------------------------------------------------

    def chapter_path(self) -> tuple[str, ...]:
        return tuple(name for _, name in self.path)

    def open_division(self, match: re.Match, text: str) -> None:
        self.close_article()
        rank = DIVISION_RANK[match.group(2)]
        while self.path and self.path[-1][0] >= rank:
            self.path.pop()
        self.path.append((rank, re.sub(r"\s+", " ", text)))
        self.divisions.append(self.chapter_path())

    def open_article(self, match: re.Match, page: int | None, offset: int) -> None:
        self.close_article()
        number, branch = int(match.group(1)), int(match.group(2)) if match.group(2) else None
        self.last_key = (number, branch or 0)
        self.current = ParsedArticle(
            article=article_label(number, branch), title=(match.group(3) or "").strip(),
            chapter_path=self.chapter_path(), page=page, offset=offset,
        )
        rest = (match.group(4) or "").strip()
        if rest:
            self.add_body(self.current, rest)

    def add_body(self, article: ParsedArticle, text: str) -> None:
        marker = _PARAGRAPH.match(text)
        if marker:
            body = text[marker.end():].strip()
            article.paragraphs.append(ParsedParagraph(marker=marker.group(1), text=f"{marker.group(1)} {body}"))
        elif article.paragraphs:
            article.paragraphs[-1].text += "\n" + text
        else:
            article.paragraphs.append(ParsedParagraph(marker="", text=text))

    def close_article(self) -> None:
        if self.current is None:
            return
        article = self.current
        self.current = None
        body = article.body
        article.deleted = bool(DELETED_BODY.match(body)) or (not body and article.title.startswith("삭제"))
        self.articles.append(article)

    # -- 부칙 ----------------------------------------------------------------

    def open_addenda(self, text: str, page: int | None, offset: int) -> None:
        self.close_article()
        self.in_addenda = True
        self.path = []
        match = ADDENDA_HEADING.match(text)
        note = (match.group(1) or "").strip() if match else ""
        if not note and self.addenda_block is None:
            return  # a bare "## 부칙" section heading: blocks follow as "부칙 <…>" lines
        self.addenda_block = ParsedArticle(article="부칙", title=f"부칙 <{note}>" if note else "부칙",
                                           kind="addenda", page=page, offset=offset)
        self.current = self.addenda_block

    def feed_addenda(self, text: str, page: int | None, offset: int) -> None:
        if self.current is None:
            self.addenda_block = ParsedArticle(article="부칙", title="부칙", kind="addenda", page=page, offset=offset)
            self.current = self.addenda_block
        article = ARTICLE_HEADING.match(text)
        if article and article.group(3) is not None:
            # 부칙 articles become paragraphs of the block, so a split keeps each one whole.
            label = article_label(int(article.group(1)), int(article.group(2)) if article.group(2) else None)
            self.current.paragraphs.append(
                ParsedParagraph(marker=label, text=f"{label}({article.group(3)}) {article.group(4)}".strip())
            )
        else:
            self.add_body(self.current, text)

    def finish(self) -> list[ParsedArticle]:
        self.close_article()
        if not self.articles and self.preamble:
            self.articles.append(ParsedArticle(article="", kind="text",
                                               paragraphs=[ParsedParagraph("", "\n".join(self.preamble))]))
        return self.articles


def annexes_from_front_matter(front: dict) -> list[ParsedArticle]:
    """별표/별지 listed in the front matter's 첨부파일: lookup targets with the title and the link."""
    entries = front.get("첨부파일") or []
    annexes: list[ParsedArticle] = []
    if not isinstance(entries, list):
        return annexes
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        kind_name = str(entry.get("별표구분") or "별표").strip()
        try:
            number = int(str(entry.get("별표번호") or "0"))
            branch = int(str(entry.get("별표가지번호") or "0"))
        except ValueError:
            continue
        label = f"{kind_name} {number}" + (f"의{branch}" if branch else "")
        title = str(entry.get("제목") or "").strip()
        url = str(entry.get("파일링크") or entry.get("PDF링크") or "")
        body = f"{label} {title}".strip()
        if url:
            body += f"\n파일: {url}"
        annexes.append(ParsedArticle(article=label, title=title, kind="annex" if kind_name == "별표" else "form",
                                     paragraphs=[ParsedParagraph("", body)], url=url))
    return annexes


def plain_sections(loaded: LoadedDocument) -> list[ParsedArticle]:
    """Text without article structure: one section whose paragraphs are its blank-line separated blocks.

    The chunker then packs neighbouring blocks into chunks of its size: one chunk per block made a plain-text
    file of short paragraphs into thousands of tiny chunks, each paying for an embedding.
    """
    blocks = [b.strip() for b in re.split(r"\n\s*\n", loaded.text) if b.strip()]
    if not blocks:
        return []
    return [ParsedArticle(article="", kind="text", paragraphs=[ParsedParagraph("", b) for b in blocks])]
