"""QueryRouter: chitchat, structural lookup or search. Lookups are caught by pattern before any LLM call.

Small talk is recognised by the kind of utterance (a greeting, thanks, a goodbye, a pause, a reaction, an apology,
a question about the bot itself), never by a list of sentences; a message that also asks about a regulation
("고마워요, 그럼 병가는?") is a question, and a rule code ("3-1-24") or a one-word question ("연차?") is never
small talk.
"""

from __future__ import annotations

from typing import Protocol

from rag.lang.chitchat import REACTION_NOISE, REACTION_WORDS, SMALL_TALK_KINDS
from rag.lang.questions import QUESTION_CUE
from rag.lang.reference import NUMBERED_REFERENCE
from rag.models import Route
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.contracts import RouteDecision

# A question about something no regulation holds (the weather, the weekend): the bot says it cannot answer it.
OFF_TOPIC = "off_topic"
# Kinds that are questions to the bot: they may carry a question mark and still be small talk.
BOT_KINDS = frozenset({"identity", "capability", "usage"})


class ChangeQuestion(Protocol):
    """Tells a "what changed" question (`rag.stages.changes.ChangeCues`)."""

    def asks(self, question: str) -> bool: ...


class OfflineQueryRouter:
    """Pattern router: a pure reference → lookup; small talk with no regulation topic → chitchat; else search.

    A regulation topic is a content word the indexed regulations use (`corpus`; without one, any content word).
    """

    def __init__(self, lookup: StructuralLookup, tokenizer: Tokenizer, *, corpus: IndexedCorpus | None = None,
                 max_topic_words: int = 2, changes: ChangeQuestion | None = None) -> None:
        self.lookup = lookup
        self.changes = changes  # "개정 내역" cues (rag/data/changes.yaml): a lookup of the change record
        self.tokenizer = tokenizer
        self.corpus = corpus if corpus is not None else getattr(lookup, "corpus", None)
        self.max_topic_words = max_topic_words

    async def run(self, question: str) -> RouteDecision:
        if self.lookup.parse(question) is not None or self.asks_changes(question):
            return RouteDecision(route=Route.LOOKUP)
        kind = self.chitchat_kind(question)
        if kind:
            return RouteDecision(route=Route.CHITCHAT, chitchat_kind=kind)
        return RouteDecision(route=Route.SEARCH)

    def asks_changes(self, question: str) -> bool:
        """"취업규칙 개정 내역", "최근에 바뀐 규정 있어?": what changed, answered from the change record."""
        return self.changes is not None and self.changes.asks(question)

    def chitchat_kind(self, question: str) -> str:
        """The kind of small talk, or "" when the message is (or carries) a question about the regulations."""
        text = question.strip()
        if not text or NUMBERED_REFERENCE.search(text):  # "3-1-24", "제5조": never small talk
            return ""
        if all(REACTION_NOISE.sub("", word).lower() in REACTION_WORDS for word in text.split()):
            return "reaction"
        match = next(((kind, m) for kind, pattern in SMALL_TALK_KINDS if (m := pattern.search(text))), None)
        if match is None:
            return ""
        kind, _ = match
        rest = dict(SMALL_TALK_KINDS)[kind].sub(" ", text)
        if kind in BOT_KINDS:  # "안녕하세요~ 뭘 물어볼 수 있어요?", "누가 만든 챗봇이야? 어떤 자료로 답해?": the
            for _, pattern in SMALL_TALK_KINDS:  # greeting or the second question about the bot is no regulation topic
                rest = pattern.sub(" ", rest)
        topic = self._topic_words(rest)
        if kind in BOT_KINDS or kind == "other":
            if topic:  # a mood word is weak evidence: any regulation topic makes a question
                return ""
            # "이번 주말 날씨 어때?" asks for something no regulation holds: it is told so, not chatted with.
            return OFF_TOPIC if kind == "other" and QUESTION_CUE.search(rest) else kind
        if topic and (QUESTION_CUE.search(rest) or len(topic) > self.max_topic_words):
            return ""  # small talk around a regulation question: the question wins
        return kind

    def _topic_words(self, text: str) -> list[str]:
        words = [t for t in self.tokenizer.tokens(text) if (len(t) > 1 or t[:1].isdigit()) and not t.endswith("다")]
        if self.corpus is None or not self.corpus.chunks:
            return words
        return [t for t in words if self.corpus.doc_freq.get(t, 0) > 0]
