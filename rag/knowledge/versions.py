"""Versions of a regulation: which text is in force, and what changed article by article between two versions.

Design: the live index (the store's `chunks`, BM25, Chroma) always holds the version IN FORCE; the store's
`versions` table keeps every version's text per article. A re-ingest whose text differs records a new version; one
whose effective date (front matter 시행일자, else the latest 부칙 "… 부터 시행한다") is still ahead is stored with its
chunks and held — the old text stays in force — until `promote_due_versions` swaps it in on that date (checked at
every ingest, at start-up and before answering). Changes are computed from consecutive versions when read, so a
pruned version simply drops out of the record.

This module holds the pure pieces (dates, per-article texts, the diff, the change log); it imports no store, so
the answer stages may read changes through the `VersionSource` protocol.
"""

from __future__ import annotations

import difflib
import itertools
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from rag.lang.reference import DATE, ENFORCED_FROM, PARAGRAPH_LINE
from rag.models import CIRCLED, Chunk, paragraph_label
from rag.text import collapse_spaces

log = logging.getLogger(__name__)

VersionState = Literal["in_force", "pending", "superseded"]
ChangeKind = Literal["added", "changed", "removed"]

# A renumbered article is the unmatched pair whose texts are this similar (difflib ratio of the bodies, + 0.15 when
# the titles agree). Hand-set: on samples/취업규칙.md the most similar two different articles score 0.49 (measured
# with `similarity` over every pair), a moved article with one 항 edited scores above 0.8.
RENUMBERED_SIMILARITY = 0.65
_TITLE_BONUS = 0.15


def iso_date(text: str) -> str:
    """The first date in `text` as YYYY-MM-DD, or ""."""
    match = DATE.search(text or "")
    if match is None:
        return ""
    y, m, d = (match.group(1), match.group(2), match.group(3)) if match.group(1) else match.group(4, 5, 6)
    try:
        return date(int(y), int(m), int(d)).isoformat()
    except ValueError:
        return ""


def effective_date(chunks: Sequence[Chunk]) -> str:
    """When a version applies from: the front matter's 시행일자, else the date the last 부칙 says it is enforced from
    ("이 규칙은 2026년 3월 1일부터 시행한다"), else "". The first date of that 부칙 counts: a later one is a proviso
    ("다만, 제5조의 개정규정은 2027년 …"), which must not hold back the whole text."""
    front = next((iso_date(c.effective_date) for c in chunks if c.effective_date), "")
    if front:
        return front
    for chunk in reversed([c for c in chunks if c.kind == "addenda"]):
        match = ENFORCED_FROM.search(chunk.text)
        if match:
            y, m, d = (int(g) for g in match.groups())
            try:
                return date(y, m, d).isoformat()
            except ValueError:
                return ""
    return ""


def today_of(clock: Callable[[], float]) -> str:
    """The local date of an epoch clock, YYYY-MM-DD."""
    return date.fromtimestamp(clock()).isoformat()


def timestamp_of(clock: Callable[[], float]) -> str:
    """The clock's time, ISO 8601 in UTC to the second."""
    return datetime.fromtimestamp(clock(), tz=UTC).isoformat(timespec="seconds")


class ArticleText(BaseModel):
    """One article's text in one version: label, title and body (the chunk header removed, parts joined)."""

    model_config = ConfigDict(frozen=True)

    article: str
    title: str = ""
    text: str

    @property
    def heading(self) -> str:
        """`제20조(연차유급휴가)`; an addenda block is its title (`부칙 <2026.3.1>`)."""
        if self.article == "부칙" and self.title:
            return self.title
        return f"{self.article}({self.title})" if self.title and self.article else (self.article or self.title)

    @property
    def shown(self) -> str:
        """Heading and body, as `before`/`after` show it."""
        return f"{self.heading}\n{self.text}".strip() if self.heading else self.text

    @property
    def comparable(self) -> str:
        return collapse_spaces(self.text)


def article_texts(chunks: Iterable[Chunk]) -> list[ArticleText]:
    """Each article of one document, in order, from its chunks (a split article's parts joined)."""
    out: list[tuple[Chunk, list[str]]] = []
    for chunk in chunks:
        body = chunk.text.partition("\n")[2].strip()
        if chunk.part and out and out[-1][0].article == chunk.article:
            out[-1][1].append(body)
        else:
            out.append((chunk, [body]))
    return [ArticleText(article=c.article, title=c.title, text="\n".join(b for b in bodies if b))
            for c, bodies in out]


def same_text(a: Sequence[ArticleText], b: Sequence[ArticleText]) -> bool:
    """Whether two versions say the same, whitespace aside."""
    return [(x.article, x.title, x.comparable) for x in a] == [(x.article, x.title, x.comparable) for x in b]


class ArticleChange(BaseModel):
    """One article added, changed or removed between two versions; `paragraphs` are the 항 that differ."""

    model_config = ConfigDict(frozen=True)

    article: str  # the label in the newer version (the older one for a removal)
    change: ChangeKind
    before: str = ""
    after: str = ""
    title: str = ""
    previous_article: str = ""  # a renumbered article's old label
    paragraphs: tuple[str, ...] = ()  # 제1항, 제3항 …

    def as_json(self) -> dict:
        return {"article": self.article, "change": self.change, "before": self.before, "after": self.after}

    @property
    def what(self) -> str:
        """`제20조(연차유급휴가) 제1항`, `제21조 (← 제20조)`."""
        if self.article == "부칙":
            head = self.title or self.article  # 부칙 <2026.3.1>: the block's date tells which one
        else:
            head = f"{self.article}({self.title})" if self.title else self.article
        if self.previous_article and self.previous_article != self.article:
            head += f" (← {self.previous_article})"
        return f"{head} {', '.join(self.paragraphs)}".strip()


def paragraphs_of(text: str) -> list[tuple[str, str]]:
    """(marker, text) of each 항 of an article body; text before the first 항 has marker ""."""
    out: list[tuple[str, str]] = []
    for line in text.split("\n"):
        match = PARAGRAPH_LINE.match(line)
        if match or not out:
            out.append((match.group(1) if match else "", line))
        else:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return [(m, t.strip()) for m, t in out if t.strip()]


def changed_paragraphs(before: str, after: str) -> tuple[str, ...]:
    """The 항 (제1항 …) whose text differs, in order; () when the article has no 항 or all of them differ."""
    old = {m: collapse_spaces(t) for m, t in paragraphs_of(before) if m}
    new = {m: collapse_spaces(t) for m, t in paragraphs_of(after) if m}
    markers = [m for m in CIRCLED if (m in old or m in new) and old.get(m) != new.get(m)]
    if not markers or len(markers) == len(set(old) | set(new)):
        return ()
    return tuple(paragraph_label(m) for m in markers)


def similarity(a: ArticleText, b: ArticleText) -> float:
    """How alike two articles are: their bodies' difflib ratio, plus a bonus when the titles agree."""
    matcher = difflib.SequenceMatcher(None, a.comparable, b.comparable, autojunk=False)
    if matcher.real_quick_ratio() < RENUMBERED_SIMILARITY - _TITLE_BONUS:
        return matcher.real_quick_ratio()
    bonus = _TITLE_BONUS if a.title and a.title == b.title else 0.0
    return matcher.ratio() + bonus


def diff_articles(before: Sequence[ArticleText], after: Sequence[ArticleText]) -> list[ArticleChange]:
    """Added, changed and removed articles from `before` to `after`, in the newer version's order.

    Matching, in order: the same label and text (unchanged); the same text under another label (renumbered);
    the most similar remaining pair by title and text above RENUMBERED_SIMILARITY (renumbered and edited); the same
    label (edited in place). What stays unmatched was added or removed.
    """
    old_left = dict(enumerate(before))
    new_left = dict(enumerate(after))
    pairs: dict[int, int] = {}  # new index → old index

    def take(i: int, j: int) -> None:
        pairs[i] = j
        del new_left[i], old_left[j]

    def first_old(test: Callable[[ArticleText], bool]) -> int | None:
        return next((j for j, a in old_left.items() if test(a)), None)

    for i, new in list(new_left.items()):
        j = first_old(lambda a, n=new: a.article == n.article and a.comparable == n.comparable)
        if j is not None:
            take(i, j)
    for i, new in list(new_left.items()):
        j = first_old(lambda a, n=new: a.comparable == n.comparable and a.article != "부칙")
        if j is not None and new.article != "부칙":
            take(i, j)
    scored = sorted(((similarity(old_left[j], new_left[i]), i, j) for i in new_left for j in old_left
                     if old_left[j].article and new_left[i].article != "부칙" and old_left[j].article != "부칙"
                     and old_left[j].article != new_left[i].article), reverse=True)
    for score, i, j in scored:
        if score < RENUMBERED_SIMILARITY:
            break
        if i in new_left and j in old_left:
            take(i, j)
    for i, new in list(new_left.items()):
        j = first_old(lambda a, n=new: a.article == n.article and a.title == n.title) if new.article else None
        if j is None and new.article and new.article != "부칙":
            j = first_old(lambda a, n=new: a.article == n.article)
        if j is not None:
            take(i, j)
    changes: list[ArticleChange] = []
    for i, new in enumerate(after):
        if i in pairs:
            old = before[pairs[i]]
            if old.article == new.article and old.comparable == new.comparable and old.title == new.title:
                continue
            changes.append(ArticleChange(article=new.article, change="changed", before=old.shown, after=new.shown,
                                         title=new.title, previous_article=old.article,
                                         paragraphs=changed_paragraphs(old.text, new.text)))
        else:
            changes.append(ArticleChange(article=new.article, change="added", after=new.shown, title=new.title))
    for j in sorted(old_left):
        old = before[j]
        changes.append(ArticleChange(article=old.article, change="removed", before=old.shown, title=old.title))
    return changes


def word_diff(before: str, after: str) -> list[tuple[Literal["same", "removed", "added"], str]]:
    """The two texts as runs of words kept, removed and added (whitespace-separated words)."""
    old, new = before.split(), after.split()
    runs: list[tuple[Literal["same", "removed", "added"], str]] = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            runs.append(("same", " ".join(old[a1:a2])))
            continue
        if a2 > a1:
            runs.append(("removed", " ".join(old[a1:a2])))
        if b2 > b1:
            runs.append(("added", " ".join(new[b1:b2])))
    return runs


# --- versions as stored ------------------------------------------------------------------------------------------


class VersionRecord(BaseModel):
    """One version of one ingested file, as the store's `versions` table holds it."""

    model_config = ConfigDict(frozen=True)

    path: str
    collection: str
    version: int
    doc: str
    effective: str = ""  # YYYY-MM-DD, or "" when the text names none
    ingested_at: str = ""  # ISO 8601, UTC
    state: VersionState = "in_force"
    articles: tuple[ArticleText, ...] = ()

    def articles_json(self) -> str:
        return json.dumps([a.model_dump() for a in self.articles], ensure_ascii=False)

    @property
    def dated(self) -> str:
        """The date the version counts from: its effective date, else the day it was ingested."""
        return self.effective or self.ingested_at[:10]


class DocumentChange(BaseModel):
    """What changed in one document from one version to the next (`regbot changes`)."""

    model_config = ConfigDict(frozen=True)

    doc: str
    collection: str
    from_version: int
    to_version: int
    ingested_at: str
    effective: str
    state: VersionState  # of the newer version: pending means it is not in force yet
    articles: tuple[ArticleChange, ...]

    @property
    def dated(self) -> str:
        return self.effective or self.ingested_at[:10]

    def as_json(self) -> dict:
        return {"doc": self.doc, "from_version": self.from_version, "to_version": self.to_version,
                "ingested_at": self.ingested_at, "effective": self.effective,
                "articles": [a.as_json() for a in self.articles]}


class Amendment(BaseModel):
    """The last change of one article: when it counts from, and whether it is still ahead."""

    model_config = ConfigDict(frozen=True)

    doc: str
    article: str
    dated: str
    pending: bool = False


class VersionSource(Protocol):
    """What the change log reads from the chunk store (`rag.knowledge.store.ChunkStore`)."""

    def version(self) -> int: ...

    def versions(self, *, amended_only: bool = False) -> list[VersionRecord]: ...

    def next_pending(self) -> str: ...


class ChangeLog:
    """Article-level changes between consecutive versions of every document, recomputed when the store changes."""

    def __init__(self, source: VersionSource) -> None:
        self.source = source
        self._version = -1
        self._changes: list[DocumentChange] = []
        self._next_pending = ""

    def all(self) -> list[DocumentChange]:
        """Every change, oldest first."""
        self._refresh()
        return self._changes

    def next_pending(self) -> str:
        """The earliest effective date a held version waits for, or ""."""
        self._refresh()
        return self._next_pending

    def _refresh(self) -> None:
        version = self.source.version()
        if version != self._version:
            self._changes = list(_changes_of(self.source.versions(amended_only=True)))
            self._next_pending = self.source.next_pending()
            self._version = version

    def changes(self, *, since: str = "", doc: str = "", collections: Sequence[str] = (),
                include_pending: bool = True) -> list[DocumentChange]:
        """Changes dated (effective or ingested) on or after `since`, of `doc`, in `collections` (empty: all)."""
        out = []
        for change in self.all():
            if collections and change.collection not in collections:
                continue
            if doc and change.doc != doc:
                continue
            if since and max(change.dated, change.ingested_at[:10]) < since:
                continue
            if not include_pending and change.state == "pending":
                continue
            out.append(change)
        return out

    def amendments(self, *, today: str, within_days: int,
                   collections: Sequence[str] = ()) -> dict[tuple[str, str], list[Amendment]]:
        """(doc, article) → its latest amendment in force within `within_days` before `today`, then its latest
        amendment still to come into force (either may be missing)."""
        start = (date.fromisoformat(today) - timedelta(days=within_days)).isoformat()
        found: dict[tuple[str, str], dict[bool, Amendment]] = {}
        for change in self.changes(collections=collections):
            pending = change.state == "pending"
            if not pending and not (start <= change.dated <= today):
                continue
            for article in change.articles:
                if article.change != "removed" and article.article:
                    found.setdefault((change.doc, article.article), {})[pending] = Amendment(
                        doc=change.doc, article=article.article, dated=change.dated, pending=pending)
        return {key: [kinds[p] for p in (False, True) if p in kinds] for key, kinds in found.items()}


def _changes_of(versions: Iterable[VersionRecord]) -> Iterable[DocumentChange]:
    by_file: dict[tuple[str, str], list[VersionRecord]] = {}
    for record in versions:
        by_file.setdefault((record.path, record.collection), []).append(record)
    changes: list[DocumentChange] = []
    for records in by_file.values():
        records.sort(key=lambda r: r.version)
        for old, new in itertools.pairwise(records):
            articles = diff_articles(old.articles, new.articles)
            if articles:
                changes.append(DocumentChange(doc=new.doc, collection=new.collection, from_version=old.version,
                                              to_version=new.version, ingested_at=new.ingested_at,
                                              effective=new.effective, state=new.state, articles=tuple(articles)))
    changes.sort(key=lambda c: (c.ingested_at, c.doc, c.to_version))
    return changes


class VectorWriter(Protocol):
    """The part of the dense index a promotion needs (`rag.retrieval.dense.DenseIndex`)."""

    def upsert(self, chunks: Sequence[Chunk]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...


class HeldVersions(Protocol):
    """The part of the chunk store a promotion needs (`rag.knowledge.store.ChunkStore`)."""

    def due_versions(self, today: str) -> list[tuple[VersionRecord, list[Chunk], list[list[str]]]]: ...

    def promote(self, version: VersionRecord, chunks: list[Chunk], tokens: list[list[str]]) -> list[str]: ...


def promote_due_versions(store: HeldVersions, dense: VectorWriter | None, today: str) -> list[VersionRecord]:
    """Put in force every held version whose effective date has come (the latest per file wins); its chunks are
    embedded and swapped into the live index. Returns the versions promoted."""
    promoted: list[VersionRecord] = []
    for record, chunks, tokens in store.due_versions(today):
        if dense is not None:
            dense.upsert(chunks)  # the ids are the article's; the old text's vectors are overwritten
        stale = store.promote(record, chunks, tokens)
        if dense is not None and stale:
            dense.delete(stale)
        log.info("%s: version %d in force from %s", record.doc, record.version, record.effective)
        promoted.append(record)
    return promoted
