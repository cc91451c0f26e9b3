"""The bilingual glossary: English and Vietnamese words for workplace matters → the statutes' Korean words.

A question in English or Vietnamese finds nothing in Kiwi-BM25 over Korean text, and the answerability judge
reads its function words ("how", "many") as its topic; the glossary turns it into the Korean words the articles
use ("annual leave" → 연차 유급휴가), which the lexical side and the judge read instead. The dense side keeps the
question as asked (multilingual e5 reads it). Data lives in `rag/data/glossary.yaml` (its header says how it
matches); a deployment adds entries from more files in the same format.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rag.lang.detect import FOREIGN, Language, detect_language
from rag.lang.smalltalk import foreign_smalltalk_kind

DEFAULT_GLOSSARY = Path(__file__).resolve().parent.parent / "data" / "glossary.yaml"
DEFAULT_FUNCTION_WORDS = Path(__file__).resolve().parent.parent / "data" / "function_words.yaml"

_ENGLISH_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_VIETNAMESE_WORD = re.compile(r"\w+")
_NO_STEM = ("ss", "us", "is", "'s")
_HANGUL_TERM = re.compile("[\uac00-\ud7a3]+(?:[ㆍ·][\uac00-\ud7a3]+)*")


class GlossaryEntry(BaseModel):
    """One concept: the ways people say it in one language, the Korean words of the statutes, and examples
    (questions a test turns into Korean queries that must hold `korean`)."""

    model_config = ConfigDict(frozen=True)

    language: Language
    terms: tuple[str, ...] = Field(min_length=1)
    korean: tuple[str, ...] = Field(min_length=1)
    examples: tuple[str, ...] = Field(min_length=1)
    names_topic: bool = True  # False for words that ask for a figure ("how many days"): searched, not a topic

    @property
    def topic(self) -> str:
        """The entry's first term: how a reply names the topic in the asker's language."""
        return self.terms[0]


class GlossaryMatch(BaseModel):
    """A question read through the glossary: its language, the Korean query, and what matched (in order)."""

    model_config = ConfigDict(frozen=True)

    language: Language
    entries: tuple[GlossaryEntry, ...] = ()  # the entries whose phrases the question holds, in question order
    korean_query: str = ""
    topics: tuple[str, ...] = ()  # the matched entries' own-language names, in question order
    topic_words: tuple[tuple[str, ...], ...] = ()  # per topic, the Korean words its entries added
    # The share of the question's content words (not function words, not numbers) no glossary phrase took: what
    # never reached the Korean search. 0 for a Korean question.
    unread: float = 0.0
    # The share of them a topical entry took (one that names a workplace matter, not a word asking for a figure
    # or naming who is involved): an out-of-scope question is often read only through such everyday words.
    topical: float = 0.0


def _fold(text: str, language: str, *, plain: bool = False) -> list[str]:
    """Comparable words: lower case; English plurals cut to the singular; Vietnamese as written, or with `plain`
    without tone marks and diacritics (đ as d), for a question typed that way."""
    text = unicodedata.normalize("NFC", text).lower()
    if language == "vi":
        return _VIETNAMESE_WORD.findall(_strip_marks(text) if plain else text)
    words = [w.removesuffix("'s") for w in _ENGLISH_WORD.findall(text.replace("’", "'"))]
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith(_NO_STEM) else w for w in words]


def _strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.replace("đ", "d").replace("Đ", "D"))
                   if not unicodedata.combining(c))


def _typed_plain(text: str) -> bool:
    """A Vietnamese question typed without diacritics: it is compared with the glossary's phrases stripped too
    (as written, "lương" and "lượng" stay apart). Only Latin letters count: a Korean term in the question
    ("nghi viec (퇴직금)") decomposes too, and is no diacritic."""
    return "đ" not in text.lower() and not any(unicodedata.combining(c) for c in unicodedata.normalize("NFD", text))


class FollowupCues(BaseModel):
    """How a question in one language continues the conversation (`followup` in function_words.yaml), each phrase
    as folded words."""

    model_config = ConfigDict(frozen=True)

    acknowledgements: tuple[tuple[str, ...], ...] = ()
    openers: tuple[tuple[str, ...], ...] = ()
    pointers: frozenset[str] = frozenset()


class Glossary:
    """Matches a question's phrases against the glossary, longest phrase first, and builds its Korean query."""

    def __init__(self, entries: Iterable[GlossaryEntry], function_words: dict[str, frozenset[str]] | None = None,
                 followup: dict[str, FollowupCues] | None = None) -> None:
        self.entries = tuple(entries)
        self.followup = dict(followup or {})
        # Per language, folded as questions are (both as written and stripped of marks, for Vietnamese).
        self.function_words = {language: frozenset(w for word in words for plain in (False, True)
                                                   for w in _fold(word, language, plain=plain))
                               for language, words in (function_words or {}).items()}
        # Per (language, typed plain): (folded phrase, entry), longest phrase first, so "paid annual leave" wins
        # over "leave".
        self._phrases: dict[tuple[str, bool], list[tuple[tuple[str, ...], GlossaryEntry]]] = {}
        for entry in self.entries:
            for term in entry.terms:
                for plain in (False, True):
                    words = tuple(_fold(term, entry.language, plain=plain))
                    if words:
                        self._phrases.setdefault((entry.language, plain), []).append((words, entry))
        # Where each phrase stands in that order, by its first word: a question is compared only with the phrases
        # that start with one of its words (every phrase against every position took ~10 ms a question).
        self._starting: dict[tuple[str, bool], dict[str, list[int]]] = {}
        for key, phrases in self._phrases.items():
            phrases.sort(key=lambda pair: -len(pair[0]))
            for at, (words, _) in enumerate(phrases):
                self._starting.setdefault(key, {}).setdefault(words[0], []).append(at)

    def read(self, text: str, language: Language | None = None) -> GlossaryMatch:
        """The question's language and, for English or Vietnamese, its Korean query (empty when nothing
        matched)."""
        language = language or detect_language(text)
        if language not in FOREIGN:
            return GlossaryMatch(language=language)
        words, owners, found = self._match(text, language)
        # The asker's own Korean words come first ("How many days yeoncha (연차) do I get?"): the exact term
        # someone told them, which no English or Vietnamese phrase names as precisely.
        named = _HANGUL_TERM.findall(unicodedata.normalize("NFC", text))
        entries = tuple(dict.fromkeys(entry for _, entry in found))
        korean = list(dict.fromkeys([*named, *(word for entry in entries for word in entry.korean)]))
        by_topic: dict[str, list[str]] = {}
        for entry in entries:
            if entry.names_topic:
                by_topic.setdefault(entry.topic, []).extend(entry.korean)
        topics = tuple(by_topic)
        function_words = self.function_words.get(language, frozenset())
        content = [owner for word, owner in zip(words, owners, strict=True)
                   if word not in function_words and not word.isdigit()]
        unread = sum(1 for owner in content if owner is None) / len(content) if content else 0.0
        topical = sum(1 for owner in content if owner is not None and owner.names_topic) / len(content) \
            if content else 0.0
        return GlossaryMatch(language=language, entries=entries, korean_query=" ".join(korean), topics=topics,
                             topic_words=tuple(tuple(dict.fromkeys(words)) for words in by_topic.values()),
                             unread=round(unread, 4), topical=round(topical, 4))

    def leans_on_history(self, text: str) -> bool | None:
        """Whether an English or Vietnamese question continues the conversation: it opens with an opener ("And
        if …"), or with an acknowledgement and more words ("ok thanks. after I …"), or names a pointer ("it",
        "that") where a topic would be (at most one topical entry read). None for a Korean question."""
        language = detect_language(text)
        if language not in FOREIGN:
            return None
        cues = self.followup.get(language, FollowupCues())
        words = _fold(text, language)
        rest = words
        while (said := next((a for a in cues.acknowledgements if tuple(rest[:len(a)]) == a), None)) is not None:
            rest = rest[len(said):]
        if not rest or foreign_smalltalk_kind(" ".join(rest)):  # "Thanks!", "ok, see you": small talk
            return False
        if len(rest) < len(words) or any(tuple(rest[:len(o)]) == o for o in cues.openers):
            return True
        return any(w in cues.pointers for w in rest) and len(self.read(text, language).topics) <= 1

    def _match(self, text: str, language: Language) \
            -> tuple[list[str], list[GlossaryEntry | None], list[tuple[int, GlossaryEntry]]]:
        """The question's folded words, the entry whose phrase took each (None: none did), and (position, entry)
        per phrase found."""
        plain = language == "vi" and _typed_plain(text)
        words = _fold(text, language, plain=plain)
        owners: list[GlossaryEntry | None] = [None] * len(words)
        found: list[tuple[int, GlossaryEntry]] = []
        phrases, starting = self._phrases.get((language, plain), []), self._starting.get((language, plain), {})
        for at in sorted({at for word in set(words) for at in starting.get(word, ())}):
            phrase, entry = phrases[at]
            size = len(phrase)
            for start in range(len(words) - size + 1):
                if words[start:start + size] == list(phrase) and all(o is None for o in owners[start:start + size]):
                    owners[start:start + size] = [entry] * size
                    found.append((start, entry))
        found.sort(key=lambda pair: pair[0])
        return words, owners, found


def load_function_words(path: Path = DEFAULT_FUNCTION_WORDS) -> dict[str, frozenset[str]]:
    """The function words of each foreign language (`{en: {words: [...], examples: [...]}, vi: ...}`)."""
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    return {language: frozenset(_strings(data[language]["words"])) for language in FOREIGN if language in data}


def load_followup_cues(path: Path = DEFAULT_FUNCTION_WORDS) -> dict[str, FollowupCues]:
    """The follow-up cues of each foreign language (the `followup` section beside its function words)."""
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    cues = {}
    for language in FOREIGN:
        section = (data.get(language) or {}).get("followup") or {}

        def phrases(key: str, lang: str = language, section: dict = section) -> tuple[tuple[str, ...], ...]:
            return tuple(words for p in _strings(section.get(key) or []) if (words := tuple(_fold(p, lang))))

        cues[language] = FollowupCues(acknowledgements=phrases("acknowledgements"), openers=phrases("openers"),
                                      pointers=frozenset(w for p in phrases("pointers") for w in p))
    return cues


def load_glossary(path: Path = DEFAULT_GLOSSARY, *, extra: Sequence[Path] = (),
                  function_words: Path = DEFAULT_FUNCTION_WORDS) -> Glossary:
    """The package's glossary plus a deployment's files in the same format (each `{en: [...], vi: [...]}`)."""
    entries: list[GlossaryEntry] = []
    for source in (path, *extra):
        with source.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{source.name}: expected a mapping of language → entries")
        for language, items in data.items():
            if language not in FOREIGN:
                raise ValueError(f"{source.name}: unknown language {language!r} (expected en or vi)")
            for number, item in enumerate(items or [], start=1):
                try:
                    entries.append(GlossaryEntry(
                        language=language, terms=_strings(item["terms"]), korean=_strings(item["ko"]),
                        examples=_strings(item["examples"]), names_topic=bool(item.get("topic", True))))
                except (KeyError, TypeError, ValueError) as error:
                    raise ValueError(f"{source.name}: {language} entry {number} needs terms, ko and examples "
                                     f"({error})") from None
    return Glossary(entries, load_function_words(function_words), load_followup_cues(function_words))


def _strings(value: object) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    return tuple(unicodedata.normalize("NFC", str(v)).strip() for v in values if str(v).strip())
