"""Offline query analysis: NFC, Kiwi tokens (colloquial endings dropped), regulation-term expansion from an
editable table, audience hints, and earlier turns folded in when a follow-up leans on them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from rag.lang import FOREIGN, Glossary, load_glossary
from rag.lang.asks import HistoryCues, QuestionFacets, QuestionReader
from rag.models import Message, Role
from rag.retrieval.config import CONTEXT_WEIGHT, EXPANSION_WEIGHT, OWN_WEIGHT
from rag.retrieval.tokenizer import Tokenizer
from rag.text import collapse_spaces, normalize_text

DEFAULT_SYNONYMS = Path(__file__).resolve().parent.parent / "data" / "synonyms.yaml"
DEFAULT_INTENTS = Path(__file__).resolve().parent.parent / "data" / "intents.yaml"
FOLD_FIT = Path(__file__).resolve().parent.parent / "data" / "fold_fit.yaml"



def _read_table(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: expected a mapping")
    return data


def load_synonyms(path: Path = DEFAULT_SYNONYMS) -> dict[str, list[str]]:
    """`word or phrase → regulation terms` from the table's `terms` section (a flat file is read as terms)."""
    data = _read_table(path)
    terms = data.get("terms", data) if isinstance(data.get("terms"), dict) else data
    return {normalize_text(str(k)): [normalize_text(str(v)) for v in (vs if isinstance(vs, list) else [vs])]
            for k, vs in terms.items() if k not in ("terms", "audiences")}


def load_audiences(path: Path = DEFAULT_SYNONYMS) -> dict[str, str]:
    """`word → audience` hints ("교수인데" → faculty) from the table's `audiences` section."""
    data = _read_table(path)
    section = data.get("audiences") or {}
    return {normalize_text(str(k)): str(v) for k, v in section.items()}


class Intent(BaseModel):
    """A situation people describe instead of naming a rule ("가기 싫어") and the words that answer it, by
    audience (`default` for anyone)."""

    model_config = ConfigDict(frozen=True)

    name: str
    triggers: tuple[str, ...]
    keywords: dict[str, tuple[str, ...]]

    def words_for(self, audience: str) -> tuple[str, ...]:
        return self.keywords.get(audience) or self.keywords.get("default", ())


def load_intents(path: Path = DEFAULT_INTENTS) -> list[Intent]:
    """The intent table (`intents.yaml`)."""
    entries = _read_table(path).get("intents") or []
    intents = []
    for number, entry in enumerate(entries, start=1):
        try:
            intents.append(Intent(
                name=str(entry["name"]), triggers=tuple(normalize_text(str(t)) for t in entry["triggers"]),
                keywords={str(k): tuple(normalize_text(str(w)) for w in v) for k, v in entry["keywords"].items()}))
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"{path.name}: intent {number} needs name, triggers and keywords ({error})") from None
    return intents


class AnalyzedQuery(BaseModel):
    """A query ready for retrieval: its own tokens, the expansion tokens from the synonym table, the tokens of
    earlier turns it leans on, and who seems to be asking."""

    model_config = ConfigDict(frozen=True)

    text: str
    tokens: tuple[str, ...]
    expansion: tuple[str, ...] = ()
    expansion_share: tuple[float, ...] = ()  # per expansion token: 1/√(tokens its table entry adds)
    context: str = ""  # earlier user turns folded in (already chosen by the caller or the folder)
    context_tokens: tuple[str, ...] = ()
    context_expansion: tuple[str, ...] = ()  # table expansions of the earlier turn
    context_expansion_share: tuple[float, ...] = ()
    audience: str = ""  # a hint from the words ("교수인데" → faculty), not a filter
    intents: tuple[str, ...] = ()  # the intent table's situations the question describes
    language: str = "ko"  # en / vi: tokens and expansions come from the glossary's Korean query (rag/lang)
    core_tokens: tuple[str, ...] = ()  # the tokens of the question's core (`QuestionReader.core`) when it has a story
    facets: QuestionFacets = QuestionFacets()  # what the query asks (rag/lang/asks.py)

    def without_context(self) -> AnalyzedQuery:
        """The question's own words alone: the earlier turns' words and their expansions left out."""
        return self.model_copy(update={"context": "", "context_tokens": (), "context_expansion": (),
                                       "context_expansion_share": ()})

    @property
    def lexical_tokens(self) -> list[str]:
        """Every distinct query token, own words first."""
        return list(self.weighted_tokens())

    def weighted_tokens(self, *, expansion_weight: float = EXPANSION_WEIGHT,
                        context_weight: float = CONTEXT_WEIGHT) -> dict[str, float]:
        """Token → weight; a token the question itself uses keeps its full weight."""
        weights: dict[str, float] = {}
        for token in self.tokens:
            weights[token] = OWN_WEIGHT
        shares = self.expansion_share or (1.0,) * len(self.expansion)
        for token, share in zip(self.expansion, shares, strict=False):
            # One colloquial word stands for one idea: its expansion tokens share the weight of one word.
            weights.setdefault(token, expansion_weight * share)
        for token in self.context_tokens:
            weights.setdefault(token, context_weight)
        shares = self.context_expansion_share or (1.0,) * len(self.context_expansion)
        for token, share in zip(self.context_expansion, shares, strict=False):
            weights.setdefault(token, context_weight * expansion_weight * share)
        return weights

    @property
    def dense_text(self) -> str:
        """What the dense model reads: earlier turn, question, then expansion terms neither of them has."""
        extra = " ".join(dict.fromkeys(t for t in (*self.expansion, *self.context_expansion)
                                       if t not in self.text and t not in self.context))
        return collapse_spaces(f"{self.context} {self.text} {extra}")

    @property
    def all_text(self) -> str:
        return collapse_spaces(f"{self.context} {self.text}")


class QueryAnalyzer:
    """Tokenises a query and adds the regulation terms for colloquial words (야근 → 연장근로)."""

    def __init__(self, tokenizer: Tokenizer, synonyms: Mapping[str, Sequence[str]] | None = None, *,
                 audiences: Mapping[str, str] | None = None, intents: Sequence[Intent] | None = None,
                 glossary: Glossary | None = None, reader: QuestionReader | None = None) -> None:
        self.tokenizer = tokenizer
        self.reader = reader or QuestionReader()
        # English and Vietnamese questions are searched lexically by their Korean words (the dense side reads `text`).
        self.glossary = glossary if glossary is not None else (load_glossary() if synonyms is None else None)
        self.intents = list(intents) if intents is not None else (load_intents() if synonyms is None else [])
        self.synonyms = dict(synonyms) if synonyms is not None else load_synonyms()
        self.audiences = dict(audiences) if audiences is not None else (
            load_audiences() if synonyms is None else {})
        self._tables: tuple[list, list] | None = None
        self._cache: dict[tuple[str, str], AnalyzedQuery] = {}

    @property
    def _entries(self) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
        """(compact key, key tokens, expansion tokens) for each synonym entry."""
        return self._tokenised_tables()[0]

    @property
    def _triggers(self) -> list[list[tuple[str, frozenset[str]]]]:
        """(compact trigger, trigger tokens) for each trigger of each intent."""
        return self._tokenised_tables()[1]

    def _tokenised_tables(self) -> tuple[list, list]:
        # Tokenised at first use, not at construction: a command that analyses no query never loads Kiwi.
        if self._tables is None:
            keys = list(self.synonyms)
            key_tokens = self.tokenizer.tokens_many(keys) if keys else []
            terms = [" ".join(self.synonyms[k]) for k in keys]
            term_tokens = self.tokenizer.tokens_many(terms) if terms else []
            entries = [(k.replace(" ", ""), frozenset(kt), tuple(tt))
                       for k, kt, tt in zip(keys, key_tokens, term_tokens, strict=True)]
            triggers = [[(t.replace(" ", ""), frozenset(tokens)) for t, tokens in
                         zip(i.triggers, self.tokenizer.tokens_many(list(i.triggers)), strict=True)]
                        for i in self.intents]
            self._tables = (entries, triggers)
        return self._tables

    def analyze(self, text: str, *, context: str = "") -> AnalyzedQuery:
        text = collapse_spaces(normalize_text(text))
        context = collapse_spaces(normalize_text(context))
        key = (text, context)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        language, lexical = self._korean(text)
        context = self._korean(context)[1] if context and language in FOREIGN else context
        tokens = self.tokenizer.tokens(lexical)
        own_context = self.tokenizer.tokens(context) if context else []
        context_tokens = [t for t in own_context if t not in tokens]
        audience = self.audience(f"{context} {lexical}")
        expansion = self.expand_weighted(lexical, tokens)
        intents = self.matching_intents(lexical, tokens)
        for intent in intents:
            words = [t for t in dict.fromkeys(self.tokenizer.tokens(" ".join(intent.words_for(audience))))
                     if t not in tokens]
            for token in words:  # one situation stands for one idea, as a synonym entry does
                expansion[token] = max(expansion.get(token, 0.0), 1.0 / math.sqrt(len(words)))
        context_expansion = {t: w for t, w in self.expand_weighted(context, own_context).items()
                             if t not in tokens and t not in expansion and t not in context_tokens} if context else {}
        facets = self.reader.read(text, context=context)
        core = facets.core or text
        core_tokens = tuple(dict.fromkeys(self.tokenizer.tokens(core))) if core != text else ()
        if sum(1 for t in core_tokens if len(t) > 1) < 2:  # "어떻게 해야 하나요?" names nothing: the whole asks
            core_tokens = ()
        analyzed = AnalyzedQuery(
            text=text, tokens=tuple(dict.fromkeys(tokens)), core_tokens=core_tokens,
            expansion=tuple(expansion), expansion_share=tuple(expansion.values()),
            context=context, context_tokens=tuple(dict.fromkeys(context_tokens)),
            context_expansion=tuple(context_expansion), context_expansion_share=tuple(context_expansion.values()),
            audience=audience, intents=tuple(i.name for i in intents), language=language, facets=facets,
        )
        if len(self._cache) > 2048:
            self._cache.clear()
        self._cache[key] = analyzed
        return analyzed

    def _korean(self, text: str) -> tuple[str, str]:
        """(language, the text lexical search reads): the glossary's Korean query for an English or Vietnamese
        text (the text itself when nothing matched), the text for Korean."""
        if self.glossary is None or not text:
            return "ko", text
        read = self.glossary.read(text)
        return read.language, read.korean_query or text

    def expand(self, text: str, tokens: Sequence[str]) -> list[str]:
        """Regulation terms for the colloquial words and phrases in `text`."""
        return list(self.expand_weighted(text, tokens))

    def expand_weighted(self, text: str, tokens: Sequence[str]) -> dict[str, float]:
        """Expansion token → its share (1/√n for an entry adding n tokens; the largest share when several
        entries add the same token)."""
        compact = text.replace(" ", "")
        present = set(tokens)
        expansion: dict[str, float] = {}
        for key, key_tokens, terms in self._entries:
            if (key_tokens and key_tokens <= present) or (key and key in compact):
                new = [t for t in dict.fromkeys(terms) if t not in present]
                share = 1.0 / math.sqrt(len(new)) if new else 0.0
                for token in new:
                    expansion[token] = max(expansion.get(token, 0.0), share)
        return expansion

    def part_terms(self, word: str, parts: Sequence[str]) -> set[str]:
        """Regulation terms a compound gets only through one of its parts (급여 → 임금 in 실업급여), not through an
        entry for more of it (야근수당 → 연장근로 although 야근 → 연장근로 too)."""
        if not parts:
            return set()
        compact = word.replace(" ", "")
        whole: set[str] = set()
        partial: set[str] = set()
        for key, _, terms in self._entries:
            if key and key in compact:
                (partial if any(key in part for part in parts) else whole).update(terms)
        return partial - whole

    def matching_intents(self, text: str, tokens: Sequence[str]) -> list[Intent]:
        """The intents one of whose triggers the text holds."""
        compact, present = text.replace(" ", ""), set(tokens)
        return [intent for intent, triggers in zip(self.intents, self._triggers, strict=True)
                if any((t_tokens and t_tokens <= present) or (key and key in compact) for key, t_tokens in triggers)]

    def audience(self, text: str) -> str:
        compact = text.replace(" ", "")
        for word, audience in self.audiences.items():
            if word in compact:
                return audience
        return ""


def load_fold_fit(path: Path = FOLD_FIT) -> int:
    """The most topic nouns a question may name and still borrow the conversation's subject, as
    `benchmarks/fold_fit.py` fitted it (with its provenance in the file); 1 without the file."""
    try:
        return int(_read_table(path)["topic_nouns"])
    except FileNotFoundError:
        return 1


_INTERNAL_TOPIC_NOUNS = 3  # topic nouns before a pointer word that make it point inside the question
_SHORT_CHARS = 12  # without a tokenizer: a question this short (no spaces) borrows its subject


class FoldedQuery(BaseModel):
    """A follow-up with the earlier exchange it leans on (empty context when it stands alone)."""

    model_config = ConfigDict(frozen=True)

    text: str
    context: str = ""
    previous_question: str = ""  # the last earlier user turn, when folded

    @property
    def used_history(self) -> bool:
        return bool(self.context)

    @property
    def standalone(self) -> str:
        """Earlier question and this one as one line (for callers that pass a single string)."""
        return collapse_spaces(f"{self.previous_question.rstrip('?.!~ ')} {self.text}")


class ConversationFolder:
    """Decides whether a question leans on the conversation (pronouns, 그럼, a bare condition, few topic words)
    and, if so, what it leans on: the last `max_turns` user turns and the reply that followed the last one, each
    cut to `max_chars`. Retrieval searches that context at a lower weight than the question's own words, so a
    follow-up finds its subject and a standalone question is searched as asked. Offline; the LLM understander's
    rewrite replaces it where one is configured."""

    def __init__(self, tokenizer: Tokenizer | None = None, *, max_turns: int = 1, max_chars: int = 300,
                 include_reply: bool = True, cues: HistoryCues | None = None, topic_nouns: int | None = None,
                 glossary: Glossary | None = None) -> None:
        if max_turns < 1 or max_chars < 1:
            raise ValueError("max_turns and max_chars must be positive")
        self.tokenizer = tokenizer
        self.topic_nouns = load_fold_fit() if topic_nouns is None else topic_nouns
        # Demonstratives and "그럼"-openers, connectives opening the question, a bare condition (rag/data/asks.yaml).
        self.cues = cues or QuestionReader().table.history
        self.max_turns = max_turns
        self.max_chars = max_chars
        self.include_reply = include_reply
        # English and Vietnamese questions: the language home's follow-up cues decide (Kiwi reads every Latin word
        # as a topic noun, so the Korean rule below never folds them).
        self.glossary = glossary

    def leans_on_history(self, question: str) -> bool:
        text = normalize_text(question).strip()
        foreign = self.glossary.leans_on_history(text) if self.glossary is not None else None
        if foreign is not None:
            return foreign
        if self.points_back(text):
            return True
        if self.tokenizer is None:
            return len(text.replace(" ", "")) <= _SHORT_CHARS
        # Ellipsis: a question naming few topic nouns ("쌍둥이면 더 길어져?") borrows its subject.
        return self.topic_noun_count(text) <= self.topic_nouns

    def points_back(self, question: str) -> bool:
        """A cue that the question continues the conversation: a bare condition, a "그럼"-opener, a pointer word
        before the question names its own topic."""
        text = normalize_text(question).strip()
        if self.cues.condition_only.search(text) or self.cues.opening.compiled.match(text):
            return True
        cue = self.cues.leaning.compiled.search(text)
        if self.tokenizer is None or not cue:
            return bool(cue)
        # A pointer word after the question has named its own topic ("…서약서를 쓰라는데 이거 괜찮아?", "A하는
        # 항목이랑, 회사가 그 계약서를…") points inside the question; at its start it points at the conversation.
        return len(self._topic_nouns(text[: cue.start()])) < _INTERNAL_TOPIC_NOUNS

    def topic_noun_count(self, question: str) -> int:
        return len(self._topic_nouns(normalize_text(question).strip()))

    def _topic_nouns(self, text: str) -> set[str]:
        """Distinct content nouns; a compound's parts (박사과정 → 박사, 과정) count once."""
        assert self.tokenizer is not None
        nouns = {t for t in self.tokenizer.tokens(text)
                 if len(t) > 1 and not t[0].isdigit() and not (t.endswith("다") and len(t) <= 3)} if text else set()
        return {t for t in nouns if not any(t != other and t in other for other in nouns)}

    def fold(self, question: str, history: Sequence[Message]) -> FoldedQuery:
        """`history` oldest first (user and assistant messages); the latest exchange is folded in when the
        question leans on it."""
        question = collapse_spaces(normalize_text(question))
        users = [i for i, m in enumerate(history) if m.role == Role.USER and m.content.strip()]
        if not users or not self.leans_on_history(question):
            return FoldedQuery(text=question)
        picked = [self._cut(history[i].content) for i in users[-self.max_turns:]]
        last = users[-1]
        reply = next((m.content for m in history[last + 1:] if m.role == Role.ASSISTANT and m.content.strip()), "")
        parts = [*picked, self._cut(reply)] if self.include_reply and reply else picked
        return FoldedQuery(text=question, context=" ".join(parts), previous_question=picked[-1])

    def _cut(self, text: str) -> str:
        return collapse_spaces(normalize_text(text))[: self.max_chars]
