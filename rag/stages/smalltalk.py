"""SmallTalkResponder: the reply to each kind of small talk, with example questions from what is indexed."""

from __future__ import annotations

from rag.lang import framing_for
from rag.lang.stopwords import GENERIC_TITLES
from rag.retrieval.corpus import IndexedCorpus


class SmallTalkResponder:
    """Replies to small talk by kind; questions about the bot get the indexed documents and example questions."""

    def __init__(self, corpus: IndexedCorpus | None = None, *, examples: int = 3, documents: int = 6) -> None:
        self.corpus = corpus
        self.examples = examples
        self.documents = documents

    def reply(self, kind: str, question: str = "", *, language: str = "ko") -> str:
        """The reply to one kind of small talk, framed in the asker's `language` (ko, en, vi)."""
        messages = framing_for(language)
        if kind == "greeting":
            morning = "아침" in question or "morning" in question.lower()
            return messages.CHITCHAT_MORNING if morning else messages.CHITCHAT_GREETING
        fixed = {
            "thanks": messages.CHITCHAT_THANKS,
            "goodbye": messages.CHITCHAT_GOODBYE,
            "pause": messages.CHITCHAT_PAUSE,
            "reaction": messages.CHITCHAT_REACTION,
            "apology": messages.CHITCHAT_APOLOGY,
            "praise": messages.CHITCHAT_PRAISE,
            "complaint": messages.CHITCHAT_COMPLAINT,
            "test": messages.CHITCHAT_TEST,
            "off_topic": messages.CHITCHAT_OFF_TOPIC,
        }
        if kind in fixed:
            return fixed[kind]
        if kind == "identity":
            return messages.CHITCHAT_IDENTITY
        if kind == "capability":
            return self._with_examples(messages.CHITCHAT_CAPABILITY.format(documents=self._documents(language)),
                                       language)
        if kind == "usage":
            return self._with_examples(messages.CHITCHAT_USAGE.format(reference=self._reference()), language)
        return messages.CHITCHAT_OTHER

    def example_questions(self, language: str = "ko") -> list[str]:
        """One question per document (up to `examples`), about its most substantial article."""
        if self.corpus is None:
            return []
        best: dict[str, tuple[int, str]] = {}
        for chunk in self.corpus.chunks:
            if chunk.kind != "article" or chunk.deleted or not chunk.title or chunk.title in GENERIC_TITLES:
                continue
            length = len(chunk.text)
            if chunk.doc not in best or length > best[chunk.doc][0]:
                best[chunk.doc] = (length, chunk.title)
        chosen: list[str] = []
        for doc in best:  # one per statute family: 근로기준법 rather than also its 시행령
            if not any(doc.startswith(other) or other.startswith(doc) for other in chosen):
                chosen.append(doc)
        return [framing_for(language).CHITCHAT_EXAMPLE_QUESTION.format(doc=doc, title=best[doc][1])
                for doc in chosen[: self.examples]]

    def _with_examples(self, text: str, language: str = "ko") -> str:
        messages = framing_for(language)
        examples = self.example_questions(language)
        if not examples:
            return text
        listed = "\n".join(messages.CHITCHAT_EXAMPLE.format(question=q) for q in examples)
        return f"{text}\n{messages.CHITCHAT_EXAMPLES.format(examples=listed)}"

    def _documents(self, language: str = "ko") -> str:
        messages = framing_for(language)
        documents = self.corpus.documents() if self.corpus is not None else []
        if not documents:
            return messages.CHITCHAT_DEFAULT_DOCUMENTS
        shown = ", ".join(documents[: self.documents])
        more = len(documents) - self.documents
        return shown + (messages.MORE_DOCUMENTS.format(count=more) if more > 0 else "")

    def _reference(self) -> str:
        if self.corpus is not None:
            chunk = next((c for c in self.corpus.chunks if c.kind == "article" and c.article and not c.deleted), None)
            if chunk is not None:
                return chunk.label
        return "취업규칙 제20조"
