"""Structural lookup: "근로기준법 제60조", "근기법 60조 2항", "근로기준법 제4장", "여비 규정 별표 2", "근로기준법"."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rag.lang.followup import CORRECTION, FOLLOWUP_OPENER
from rag.lang.reference import (
    ADDENDA_REF,
    ANNEX_REF,
    ARTICLE_JOIN,
    ARTICLE_REF,
    ARTICLE_START,
    DIVISION_REF,
    FULLTEXT_REF,
    LOOKUP_REST,
    NAME_END,
    PARAGRAPH_REF,
    REGULATION_NAME,
    SUBORDINATE,
    article_of,
)
from rag.models import Chunk, Message, Scope, article_label, paragraph_marker
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.names import DocumentNames, load_aliases
from rag.retrieval.neighbours import NeighbourExpander
from rag.text import collapse_spaces, normalize_text, split_rule_code

MAX_LISTED_ARTICLES = 5
# Markup an answer wraps a reference in ("**취업규칙 제20조(연차유급휴가)** [1]").
_MARKUP = re.compile(r"[*「」『』\[\]]")


class LookupFocus(BaseModel):
    """The regulation (and article) a conversation was last about, read from its messages."""

    model_config = ConfigDict(frozen=True)

    doc: str
    article: str = ""


class LookupResult(BaseModel):
    """What a structural reference points to. `chunks` are in document order."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["article", "articles", "chapter", "annex", "addenda", "overview", "fulltext", "ambiguous",
                  "not_found", "changes"]  # changes: "개정 내역", answered from the change record
    doc: str = ""
    target: str = ""  # 제60조, 제4장, 별표 2, 부칙, "제60조, 제61조" (articles), or "" for an overview
    paragraph: str = ""  # ① when the reference named a 항
    chunks: tuple[Chunk, ...] = ()
    candidates: tuple[str, ...] = ()
    outline: tuple[str, ...] = ()  # overview / chapter: the headings and article titles
    page: int = 1  # fulltext: which page was asked for (1-based)
    # The query was a complete reference to a known regulation ("근로기준법 제999조", "최임법 시행령 제5조"): a
    # not_found is then the answer, never a reason to search instead.
    exact: bool = False
    # not_found: `doc` names a regulation that is not indexed at all ("취업규칙 제20조" over the statutes).
    unindexed: bool = False


class StructuralLookup:
    """Parses a reference and answers it exactly from the corpus; `parse` alone tells the router."""

    def __init__(self, corpus: IndexedCorpus, *, aliases: dict[str, str] | None = None,
                 citations: NeighbourExpander | None = None) -> None:
        self.corpus = corpus
        self.aliases = aliases if aliases is not None else load_aliases()
        self.citations = citations  # which decree articles cite a law's article ("법 제55조"); None: outline only
        self._names: DocumentNames | None = None
        self._names_version = -1

    def names(self) -> DocumentNames:
        if self._names is None or self._names_version != self.corpus.version:
            stems: dict[str, str] = {}
            codes: dict[str, str] = {}
            for chunk in self.corpus.chunks:
                if chunk.source_path:
                    stems.setdefault(re.sub(r"\.[^.]+$", "", chunk.source_path.rsplit("/", 1)[-1]), chunk.doc)
                if chunk.rule_code:
                    codes.setdefault(chunk.rule_code, chunk.doc)
            self._names = DocumentNames(self.corpus.documents(), aliases=self.aliases, file_stems=stems,
                                        codes=codes)
            self._names_version = self.corpus.version
        return self._names

    def parse(self, query: str) -> tuple[str, str] | None:
        """(document, rest) when the query starts with a known regulation name and the rest is a reference."""
        text = self._reference_text(query)
        doc, rest = self.names().longest_prefix(text)
        if not doc:
            code, after = split_rule_code(text)  # "3-1-99": a rule code no document carries is still a reference
            if code:
                return (code, after) if LOOKUP_REST.match(after) or _reference_rest(after) else None
            # A part of a name before a reference ("근로기준 제46조"): `lookup` resolves it or offers the choice.
            name, rest = _split_name(text)
            names = self.names().resolve(name) if name and _reference_rest(rest) else None
            if names is not None and not (names.doc or names.candidates) and REGULATION_NAME.search(name):
                return name, rest  # a regulation that is not indexed: `lookup` says so
            return (name, rest) if names is not None and (names.doc or names.candidates) else None
        if LOOKUP_REST.match(rest) or _reference_rest(rest) is not None:
            return doc, rest
        match = SUBORDINATE.match(rest)
        if match and _reference_rest(rest[match.end():]) is not None:
            return doc, rest  # the decree of a law that is indexed, when the decree itself is not
        return None

    def names_no_regulation(self, query: str) -> bool:
        """True for an article reference that names no regulation ("제60조", "60조 보여줘"): without a conversation
        to take the regulation from, `lookup` finds the regulations that hold it."""
        return self._bare_article(self._reference_text(query))

    def _bare_article(self, text: str) -> bool:
        """`names_no_regulation` of a text already read as a reference."""
        reference = _reference_rest(FOLLOWUP_OPENER.sub("", text, count=1))
        return reference is not None and reference[0] == "article" and not self.names().longest_prefix(text)[0]

    def focus(self, history: tuple[Message, ...] | list[Message]) -> LookupFocus | None:
        """The last regulation the conversation named (newest message first): a user's reference or the header of
        an answer. Derived from the history each Turn carries, so no separate conversation state is needed."""
        for message in reversed(history):
            found = self._mention(message.content[:600])
            if found is not None:
                return found
        return None

    def followup(self, question: str, history: tuple[Message, ...] | list[Message]) -> tuple[str, LookupFocus] | None:
        """("취업규칙 제21조", focus) for "그럼 21조는?" after a turn about 취업규칙, ("근로기준법 시행령 제30조",
        focus) for "시행령에는 뭐라고 돼 있어?" after one about 근로기준법 제55조; None when the question names its
        own regulation, is not a bare reference, or the conversation named none."""
        if not history:
            return None
        rest = FOLLOWUP_OPENER.sub("", _plain(question), count=1)
        if not rest or self.names().longest_prefix(rest)[0]:
            return None
        decree = SUBORDINATE.match(rest)  # "시행령에는 뭐라고 돼 있어?": the decree of the law talked about
        if decree is not None and LOOKUP_REST.match(rest[decree.end():]):
            focus = self.focus(history)
            if focus is None:
                return None
            implementing = self._implementing(focus, decree.group(1))
            return (implementing, focus) if implementing else None
        paragraph = PARAGRAPH_REF.match(rest)
        if paragraph is None and _reference_rest(rest) is None:
            return None
        focus = self.focus(history)
        if focus is None:
            return None
        if paragraph is not None:
            if not focus.article or not LOOKUP_REST.match(paragraph.group(2)):
                return None
            return f"{focus.doc} {focus.article} {paragraph.group(1)}항", focus
        return f"{focus.doc} {rest}", focus

    def _implementing(self, focus: LookupFocus, kind: str) -> str | None:
        """The reference to the decree (or rule) of the focus law: the articles of it that cite the focus article
        ("법 제55조제1항에 따른 유급휴일은 …"), else its outline; None when it is not indexed."""
        decree, after = self.names().longest_prefix(f"{focus.doc} {kind}")
        if not decree or decree == focus.doc or after.strip():
            return None
        articles: list[str] = []
        if focus.article and self.citations is not None:
            articles = list(dict.fromkeys(c.article for c in self.citations.implementing(focus.doc, focus.article)
                                          if c.doc == decree))
        return f"{decree} {', '.join(articles[:MAX_LISTED_ARTICLES])}" if articles else decree

    def _mention(self, text: str) -> LookupFocus | None:
        """The first regulation named in `text`, with the article right after it when there is one."""
        text = collapse_spaces(_MARKUP.sub(" ", normalize_text(text)))
        names = self.names()
        for start in [0, *(m.end() for m in re.finditer(r"[\s(]+", text))]:
            doc, rest = names.longest_prefix(text[start:])
            if not doc:
                continue
            article = ARTICLE_REF.match(rest)
            if article is None:
                return LookupFocus(doc=doc)
            branch = int(article.group(2)) if article.group(2) else None
            return LookupFocus(doc=doc, article=article_label(int(article.group(1)), branch))
        return None

    def lookup(self, query: str, scope: Scope | None = None) -> LookupResult:
        text = self._reference_text(query)
        doc, rest = self.names().longest_prefix(text)
        if not doc and split_rule_code(text)[0]:
            return LookupResult(kind="not_found", target=text, exact=True)
        if not doc and self._bare_article(text):
            found = self._among(tuple(self.corpus.documents()), FOLLOWUP_OPENER.sub("", text, count=1), scope)
            return found if found.kind != "ambiguous" or found.target else \
                LookupResult(kind="not_found", target=text, exact=True)  # no regulation has it
        if not doc:
            name, _ = _split_name(text)
            match = self.names().resolve(name)
            if match.candidates:
                return self._among(match.candidates, text[len(name):], scope)
            if not match.doc:
                reference = _reference_rest(text[len(name):])
                if reference is not None and REGULATION_NAME.search(name):
                    return LookupResult(kind="not_found", doc=name, target=reference[1], exact=True, unindexed=True)
                return LookupResult(kind="not_found", target=text)
            doc, rest = match.doc, text[len(name):]
        subordinate = SUBORDINATE.match(rest)
        if subordinate:  # the law is indexed, its decree is not
            exact = _reference_rest(rest[subordinate.end():]) is not None
            return LookupResult(kind="not_found", doc=doc, target=subordinate.group(1), exact=exact)
        chunks = self.corpus.of_document(doc, scope)
        if not chunks:
            return LookupResult(kind="not_found", doc=doc, target=text)
        reference = _reference_rest(rest)
        if reference is None:
            return self._overview(doc, chunks)
        kind, target, paragraph = reference
        if kind == "fulltext":
            body = tuple(c for c in chunks if not c.deleted)
            return LookupResult(kind="fulltext", doc=doc, chunks=body, page=int(paragraph or 1))
        if kind == "chapter":
            return self._chapter(doc, target, chunks)
        if kind == "articles":
            wanted = target.split(", ")
            selected = tuple(c for label in wanted for c in chunks if c.article == label)
            if not selected:
                return LookupResult(kind="not_found", doc=doc, target=target, exact=True)
            return LookupResult(kind="articles", doc=doc, target=target, chunks=selected)
        selected = tuple(c for c in chunks if c.article == target)
        if kind == "addenda":
            selected = tuple(c for c in chunks if c.kind == "addenda")
        if not selected:
            return LookupResult(kind="not_found", doc=doc, target=target, exact=True)
        return LookupResult(kind=kind, doc=doc, target=target, paragraph=paragraph, chunks=selected)

    def _reference_text(self, query: str) -> str:
        """The query as a reference is read: NFC, single spaces, no 「」, and what follows a correction ("근기법 말고
        근기법 시행령 제3조" → "근기법 시행령 제3조"); a correction that names no regulation keeps the one it corrects
        ("근로기준법 제60조 말고 제61조" → "근로기준법 제61조"; "근로기준법 말고 제61조" corrects the regulation)."""
        text = _plain(query)
        correction = CORRECTION.match(text)
        if correction is None:
            return text
        corrected = text[correction.end():]
        names = self.names()
        if names.longest_prefix(corrected)[0]:
            return corrected
        corrected_doc, after = names.longest_prefix(text)
        if corrected_doc and ARTICLE_START.match(after) and _reference_rest(corrected) is not None:
            return text[:len(text) - len(after)].rstrip() + " " + corrected
        return corrected

    def _among(self, candidates: tuple[str, ...], rest: str, scope: Scope | None) -> LookupResult:
        """A name several regulations share ("근로기준 제26조"): those holding the article decide. One → that article;
        several → the choice as complete references (exact: the user picks, nothing is searched); none → the
        name stays ambiguous (and may be searched)."""
        reference = _reference_rest(rest)
        if reference is None or reference[0] != "article":
            return LookupResult(kind="ambiguous", candidates=candidates)
        target = reference[1]
        holding = [doc for doc in candidates if any(c.article == target for c in self.corpus.of_document(doc, scope))]
        if len(holding) == 1:
            return self.lookup(f"{holding[0]} {rest}", scope)
        if not holding:
            return LookupResult(kind="ambiguous", candidates=candidates)
        return LookupResult(kind="ambiguous", target=target, candidates=tuple(holding), exact=True)

    def _overview(self, doc: str, chunks: list[Chunk]) -> LookupResult:
        outline: list[str] = []
        last_path: tuple[str, ...] = ()
        for chunk in chunks:
            if chunk.part or chunk.kind == "addenda" or chunk.deleted:
                continue
            if chunk.chapter_path != last_path:
                outline.extend(p for p in chunk.chapter_path if p not in last_path)
                last_path = chunk.chapter_path
            if chunk.kind in ("article", "annex", "form"):
                outline.append(f"  {chunk.article} {chunk.title}".rstrip())
        first = tuple(c for c in chunks if c.kind == "article")[:1]
        return LookupResult(kind="overview", doc=doc, chunks=first, outline=tuple(outline))

    def _chapter(self, doc: str, target: str, chunks: list[Chunk]) -> LookupResult:
        def in_division(chunk: Chunk) -> bool:
            return any(part.split(" ")[0] == target for part in chunk.chapter_path)

        selected = tuple(c for c in chunks if in_division(c))
        if not selected:
            return LookupResult(kind="not_found", doc=doc, target=target, exact=True)
        heading = next(p for p in selected[0].chapter_path if p.split(" ")[0] == target)
        outline = [heading] + [f"  {c.article} {c.title}".rstrip() for c in selected if not c.part and not c.deleted]
        return LookupResult(kind="chapter", doc=doc, target=target, chunks=selected, outline=tuple(outline))


def _plain(text: str) -> str:
    """NFC, single spaces, no 「」: a reference as it is read."""
    return collapse_spaces(normalize_text(text).replace("「", "").replace("」", ""))


def _split_name(text: str) -> tuple[str, str]:
    """(what precedes the first reference-like word, the rest): the name part of "근로기준 제46조"."""
    name = NAME_END.split(text, maxsplit=1)[0].strip()
    return name, text[len(name):]


def _reference_rest(rest: str) -> tuple[str, str, str] | None:
    """(kind, target, paragraph marker) for the part after the document name, or None (for a fulltext
    reference the third item is the page number)."""
    match = FULLTEXT_REF.match(rest)
    if match and LOOKUP_REST.match(match.group(2)):
        return "fulltext", "전문", match.group(1) or ""
    listed = _article_list(rest)
    if listed:
        return "articles", ", ".join(listed), ""
    match = ARTICLE_REF.match(rest)
    if match and LOOKUP_REST.match(match.group(4)):
        number, branch, para = int(match.group(1)), match.group(2), match.group(3)
        marker = paragraph_marker(int(para)) if para and 0 < int(para) <= 20 else ""
        return "article", article_label(number, int(branch) if branch else None), marker
    match = DIVISION_REF.match(rest)
    if match and LOOKUP_REST.match(match.group(4)):
        label = f"제{match.group(1)}{match.group(2)}" + (f"의{match.group(3)}" if match.group(3) else "")
        return "chapter", label, ""
    match = ANNEX_REF.match(rest)
    if match and LOOKUP_REST.match(match.group(4)):
        kind = "별지" if match.group(1) == "서식" else match.group(1)  # 서식 N is the form 별지 N
        label = f"{kind} {match.group(2)}" + (f"의{match.group(3)}" if match.group(3) else "")
        return "annex", label, ""
    match = ADDENDA_REF.match(rest)
    if match and LOOKUP_REST.match(match.group(1)):
        return "addenda", "부칙", ""
    return None


def _article_list(rest: str) -> list[str] | None:
    """The labels of two or more articles joined by 랑/와/및/",", followed by nothing but a request; else None."""
    labels: list[str] = []
    while len(labels) < MAX_LISTED_ARTICLES:
        match = ARTICLE_START.match(rest)
        if match is None:
            return None
        labels.append(article_of(match.group(1), match.group(2)))
        rest = rest[match.end():]
        join = ARTICLE_JOIN.match(rest)
        if join is None:
            break
        rest = rest[join.end():]
    return list(dict.fromkeys(labels)) if len(labels) > 1 and LOOKUP_REST.match(rest) else None
