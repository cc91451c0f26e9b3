"""The vocabulary a deployment answers with: every data file of the language home, the package's and the
deployment's lexicon folder's together (`rag.lang.lexicon`), loaded once at start-up and handed to the stages."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from rag.knowledge.store import ChunkStore
from rag.lang.glossary import Glossary, load_followup_cues, load_function_words, load_glossary
from rag.lang.lexicon import Lexicon, words_of
from rag.retrieval.names import load_aliases
from rag.retrieval.query import Intent, load_audiences, load_intents, load_synonyms
from rag.stages.changes import ChangeCues
from rag.stages.question_core import QuestionCues

T = TypeVar("T")


@dataclass(frozen=True)
class Vocabulary:
    """Synonyms, audiences, intents, the glossary, aliases and the cue tables, with a deployment's additions."""

    synonyms: dict[str, list[str]]
    audiences: dict[str, str]
    intents: list[Intent]
    glossary: Glossary
    aliases: dict[str, str]
    change_cues: ChangeCues
    question_cues: QuestionCues
    words: frozenset[str] = field(default=frozenset())  # every word an entry holds (see `knows`)

    @classmethod
    def load(cls, lexicon: Lexicon) -> Vocabulary:
        """Every table from the package's file and `lexicon`'s extensions; a bad file is a `LexiconError`."""
        synonyms = lexicon.load_list_mapping("synonyms", load_synonyms)
        aliases = lexicon.load_mapping("aliases", load_aliases)
        # The package's function words and follow-up cues stay with the merged entries: without them every "how"
        # and "many" counts as a word the glossary could not read (the judge's `unread`), and no English follow-up
        # is ever folded.
        glossary = Glossary((e for g in lexicon.read("glossary", load_glossary) for e in g.entries),
                            load_function_words(), load_followup_cues())
        intents = lexicon.load_list("intents", load_intents)
        words = frozenset(words_of([*synonyms, *(t for ts in synonyms.values() for t in ts), *aliases,
                                    *aliases.values(), *(k for e in glossary.entries for k in e.korean),
                                    *(t for i in intents for t in i.triggers)]))
        return cls(
            synonyms=synonyms,
            audiences=lexicon.load_mapping("synonyms", load_audiences),
            intents=intents,
            glossary=glossary,
            aliases=aliases,
            change_cues=_single(lexicon, "changes", lambda paths: ChangeCues(paths[0], extra=paths[1:])),
            question_cues=_single(lexicon, "question_core", QuestionCues.load_all),
            words=words,
        )

    def knows(self, word: str) -> bool:
        """Whether some entry holds `word` (as a word of it, or inside a longer one: 출근 in 주말출근)."""
        return word in self.words or any(word in w for w in self.words if len(w) > len(word))


def _single(lexicon: Lexicon, name: str, build: Callable[[Sequence[Path]], T]) -> T:
    """A table built from all its files at once, each file checked alone first so an error names it."""
    lexicon.read(name, lambda path: build((path,)))
    return build(lexicon.files(name))




class KnownWords:
    """The words the index or the vocabulary knows; a refused question's other words are what an operator may
    add to the lexicon (`regbot report`)."""

    def __init__(self, indexed: Iterable[str], vocabulary: Vocabulary) -> None:
        self.indexed = frozenset(indexed)
        self.vocabulary = vocabulary

    @classmethod
    def of_index(cls, store: ChunkStore, lexicon: Lexicon) -> KnownWords:
        """The lexical tokens of every indexed chunk, and the package's and `lexicon`'s vocabulary."""
        _, tokens = store.load()
        return cls((t for chunk_tokens in tokens for t in chunk_tokens), Vocabulary.load(lexicon))

    def __call__(self, word: str) -> bool:
        return word in self.indexed or self.vocabulary.knows(word)

    def unknown(self, noun_sets: Iterable[Sequence[str]]) -> list[tuple[str, int]]:
        """(word, number of questions holding it) for the words neither knows, most frequent first."""
        counts = Counter(word for nouns in noun_sets for word in set(nouns) if not self(word))
        return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
