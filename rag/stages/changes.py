"""What changed in the regulations: "개정 내역" questions answered from the change record, and the line an answer
adds when it quotes an article amended lately ("※ 취업규칙 제20조: 2026-03-01 개정").

The change record is `rag.knowledge.versions.ChangeLog` (article-level changes between ingested versions); the
cues that make a question a "개정 내역" lookup are data (`rag/data/changes.yaml`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path

import yaml

from rag import messages
from rag.knowledge.versions import ArticleChange, ChangeLog, DocumentChange, paragraphs_of, today_of
from rag.lang.lexicon import where
from rag.lang.reference import ARTICLE_MENTION, article_of
from rag.models import Chunk, Citation, Scope, cite_chunk, paragraph_marker
from rag.retrieval.lookup import LookupResult, StructuralLookup
from rag.stages.contracts import DraftAnswer
from rag.text import collapse_spaces, normalize_text

log = logging.getLogger(__name__)

DEFAULT_CUES = Path(__file__).resolve().parent.parent / "data" / "changes.yaml"
MAX_CHANGES_SHOWN = 3  # versions of one regulation, newest first
MAX_ARTICLES_SHOWN = 6  # articles of one version
QUOTE_CHARS = 240


class ChangeCues:
    """Whether a question asks what changed (`rag/data/changes.yaml`); the file's examples are its tests."""

    def __init__(self, path: Path = DEFAULT_CUES, *, extra: Sequence[Path] = ()) -> None:
        """The cues of `path` and of a deployment's `extra` files (same format); a bad pattern is a ValueError
        naming its file."""
        self.patterns: list[re.Pattern[str]] = []
        self.examples: list[str] = []
        self.counter_examples: list[str] = []
        for source in (path, *extra):
            with source.open(encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
            for number, pattern in enumerate(data.get("patterns") or []):
                try:
                    self.patterns.append(re.compile(pattern))
                except re.error as exc:
                    raise ValueError(f"{where(source, 'patterns', number)}: pattern {pattern!r}: {exc}") from None
            self.examples += list(data.get("examples") or [])
            self.counter_examples += list(data.get("counter_examples") or [])

    def asks(self, question: str) -> bool:
        text = collapse_spaces(normalize_text(question))
        return any(p.search(text) for p in self.patterns)


class ChangeAnswerer:
    """Answers "취업규칙 개정 내역" / "최근에 바뀐 규정 있어?" from the change record: which articles changed, when,
    before → after, each cited; only changes in collections the turn's scope can see."""

    def __init__(self, log: ChangeLog, lookup: StructuralLookup, *, cues: ChangeCues | None = None,
                 clock: Callable[[], float] = time.time, recent_days: int = 90) -> None:
        if recent_days < 0:
            raise ValueError("recent_days must be 0 or more")
        self.log = log
        self.lookup = lookup
        self.cues = cues or ChangeCues()
        self.clock = clock
        self.recent_days = recent_days

    def asks(self, question: str) -> bool:
        return self.cues.asks(question)

    async def run(self, question: str, scope: Scope | None = None) -> tuple[DraftAnswer, LookupResult]:
        scope = scope or Scope()
        doc = self._named_document(question, scope)
        if doc:
            changes = self.log.changes(doc=doc, collections=scope.collections)
            article = _article_named(question)
            if article:  # "취업규칙 제20조 언제 바뀌었어?": only the changes of that article
                changes = [c.model_copy(update={"articles": kept}) for c in changes
                           if (kept := tuple(a for a in c.articles if article in (a.article, a.previous_article)))]
            if not changes:
                text = (messages.CHANGES_NONE_ARTICLE.format(doc=doc, article=article) if article
                        else messages.CHANGES_NONE.format(doc=doc))
                return DraftAnswer(text=text, citations=()), LookupResult(kind="changes", doc=doc, exact=True)
            return self._document(doc, list(reversed(changes))[:MAX_CHANGES_SHOWN], scope)
        return self._recent(scope)

    def _named_document(self, question: str, scope: Scope) -> str:
        """The regulation the question names (title, file name or alias), when the scope can see it."""
        names = self.lookup.names()
        text = collapse_spaces(normalize_text(question))
        visible = set(self.lookup.corpus.documents(scope))
        for start in [0, *(m.end() for m in re.finditer(r"\s+", text))]:
            doc, _ = names.longest_prefix(text[start:])
            if doc and doc in visible:
                return doc
        return ""

    def _document(self, doc: str, changes: list[DocumentChange], scope: Scope) -> tuple[DraftAnswer, LookupResult]:
        chunks = self.lookup.corpus.of_document(doc, scope)
        lines = [messages.CHANGES_HEADER.format(doc=doc)]
        citations: list[Citation] = []
        cited: list[Chunk] = []
        for change in changes:
            lines.append("")
            lines.append(_when(change))
            for article in change.articles[:MAX_ARTICLES_SHOWN]:
                chunk = _chunk_of(chunks, article.article) if article.change != "removed" else None
                marker = ""
                if chunk is not None:
                    citation = cite_chunk(chunk, index=len(citations) + 1, quote=_quote(article.after)[:QUOTE_CHARS])
                    citations.append(citation)
                    cited.append(chunk)
                    marker = f" [{citation.index}]"
                lines.extend(_article_lines(article, marker))
            if len(change.articles) > MAX_ARTICLES_SHOWN:
                lines.append(messages.CHANGES_MORE.format(count=len(change.articles) - MAX_ARTICLES_SHOWN))
        text = "\n".join(lines) + "\n"
        # The amended articles as they read now, one tap each.
        followups = tuple(dict.fromkeys(f"{doc} {c.article}" for c in cited))[:2]
        return (DraftAnswer(text=text, citations=tuple(citations), followups=followups),
                LookupResult(kind="changes", doc=doc, chunks=tuple(cited), exact=True))

    def _recent(self, scope: Scope) -> tuple[DraftAnswer, LookupResult]:
        """Every regulation (the scope can see) changed within the recent window or about to change."""
        today = today_of(self.clock)
        visible = set(self.lookup.corpus.documents(scope))
        recent = [c for c in self.log.changes(collections=scope.collections)
                  if c.doc in visible and (c.state == "pending" or _within(c.dated, today, self.recent_days))]
        if not recent:
            text = messages.CHANGES_NONE_RECENT.format(days=self.recent_days)
            return DraftAnswer(text=text, citations=()), LookupResult(kind="changes", exact=True)
        lines = [messages.CHANGES_RECENT_HEADER.format(days=self.recent_days)]
        citations: list[Citation] = []
        cited: list[Chunk] = []
        for change in reversed(recent):
            chunks = self.lookup.corpus.of_document(change.doc, scope)
            labels = []
            for article in change.articles[:MAX_ARTICLES_SHOWN]:
                chunk = _chunk_of(chunks, article.article) if article.change != "removed" else None
                label = f"{article.what} {messages.CHANGE_KINDS[_kind(article)]}"
                if chunk is not None:
                    citations.append(cite_chunk(chunk, index=len(citations) + 1,
                                                quote=_quote(article.after)[:QUOTE_CHARS]))
                    cited.append(chunk)
                    label += f" [{len(citations)}]"
                labels.append(label)
            lines.append(messages.CHANGES_RECENT_DOC.format(doc=change.doc, when=_when(change),
                                                            articles=", ".join(labels)))
        followups = tuple(dict.fromkeys(f"{c.doc} 개정 내역" for c in reversed(recent)))[:3]
        return (DraftAnswer(text="\n".join(lines) + "\n", citations=tuple(citations), followups=followups),
                LookupResult(kind="changes", chunks=tuple(cited), exact=True))


class AmendmentNotes:
    """The line an answer adds for each article it quotes that was amended within `recent_days`, or whose amendment
    is still to come into force. Also puts held versions in force once their date has come (`keep_current`)."""

    def __init__(self, log: ChangeLog, *, clock: Callable[[], float] = time.time, recent_days: int = 90,
                 promote: Callable[[str], object] | None = None) -> None:
        if recent_days < 0:
            raise ValueError("recent_days must be 0 or more")
        self.log = log
        self.clock = clock
        self.recent_days = recent_days
        self.promote = promote  # (today) → puts due versions in force (the bot wires the dense index into it)
        self._failed_on = ""  # a day whose promotion failed is not retried on every turn

    def keep_current(self) -> None:
        """Promote held versions whose effective date has come: read time is one of the moments that checks."""
        pending = self.log.next_pending()
        today = today_of(self.clock)
        if self.promote is not None and pending and pending <= today and self._failed_on != today:
            try:
                self.promote(today)
            except Exception:  # a failed promotion must not cost the answer; start-up or the next ingest retries
                self._failed_on = today
                log.warning("held versions could not be put in force", exc_info=True)

    def run(self, citations: Sequence[Citation], scope: Scope | None = None) -> str:
        """"※ 취업규칙 제20조: 2026-03-01 개정" lines for the cited articles, or ""."""
        if not citations:
            return ""
        collections = scope.collections if scope else ()
        amended = self.log.amendments(today=today_of(self.clock), within_days=self.recent_days,
                                      collections=collections)
        lines: list[str] = []
        for citation in citations:
            for found in amended.get((citation.doc, citation.article), ()):
                template = messages.AMENDED_PENDING_NOTE if found.pending else messages.AMENDED_NOTE
                line = template.format(label=f"{citation.doc} {citation.article}", date=found.dated)
                if line not in lines:
                    lines.append(line)
        return "\n".join(lines)


def _article_named(question: str) -> str:
    """The article a question names ("제20조", "43조의2"), or ""."""
    match = ARTICLE_MENTION.search(normalize_text(question))
    return article_of(*match.groups()) if match else ""


def _within(dated: str, today: str, days: int) -> bool:
    return (date.fromisoformat(today) - timedelta(days=days)).isoformat() <= dated <= today


def _when(change: DocumentChange) -> str:
    template = messages.CHANGES_PENDING if change.state == "pending" else messages.CHANGES_IN_FORCE
    return template.format(date=change.dated, old=change.from_version, new=change.to_version,
                           ingested=change.ingested_at[:10])


def _kind(article: ArticleChange) -> str:
    if article.change == "changed" and article.previous_article and article.previous_article != article.article \
            and _body(article.before) == _body(article.after):
        return "renumbered"
    return article.change


def _body(shown: str) -> str:
    return collapse_spaces(shown.partition("\n")[2])


def _quote(shown: str) -> str:
    """The body of a `before`/`after` text, on one line."""
    return collapse_spaces(shown.partition("\n")[2] or shown)


def _chunk_of(chunks: Sequence[Chunk], article: str) -> Chunk | None:
    return next((c for c in chunks if c.article == article), None)


def _article_lines(article: ArticleChange, marker: str) -> list[str]:
    kind = _kind(article)
    lines = [messages.CHANGE_LINE.format(what=article.what, kind=messages.CHANGE_KINDS[kind]) + marker]
    if kind == "renumbered":
        return lines
    before, after = _body(article.before), _body(article.after)
    if article.change == "changed" and article.paragraphs:
        wanted = {paragraph_marker(int(p[1:-1])) for p in article.paragraphs}
        before = " ".join(t for m, t in paragraphs_of(article.before.partition("\n")[2]) if m in wanted)
        after = " ".join(t for m, t in paragraphs_of(article.after.partition("\n")[2]) if m in wanted)
    if before:
        lines.append(messages.CHANGE_BEFORE.format(text=_short(collapse_spaces(before))))
    if after:
        lines.append(messages.CHANGE_AFTER.format(text=_short(collapse_spaces(after))))
    return lines


def _short(text: str) -> str:
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"
