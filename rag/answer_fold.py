"""What a turn's `AnswerEvent`s amount to, folded by one rule that every surface (Slack, Teams, the playground,
the terminal, the bot service) shares:

- `status` is the latest status line; `text` is every `delta` so far, as it came;
- `sources` and `followups` events give the citations and follow-ups shown while the answer streams;
- `done` carries the answer: its citations and follow-ups replace the streamed ones (when it has any), and its
  text is the text to show (the deltas were a preview);
- `error` ends the turn without an answer; `error` keeps the message as sent ("" when none was given, so each
  surface picks its fallback).

    fold = AnswerFold()
    async for event in events:
        fold.take(event)
        ...                      # the surface's own side effects (a spinner, a streamed edit)
    fold.answer, fold.error      # how the turn ended
"""

from __future__ import annotations

from rag.models import Answer, AnswerEvent, AnswerEventKind, Citation


class AnswerFold:
    """The state of one streamed answer, updated one event at a time with `take`."""

    def __init__(self) -> None:
        self.status = ""
        self.text = ""
        self.citations: tuple[Citation, ...] = ()
        self.followups: tuple[str, ...] = ()
        self.answer: Answer | None = None
        self.error = ""
        self.done = False  # a `done` event came (it always carries an answer from the pipeline)
        self.failed = False  # an `error` event came

    def take(self, event: AnswerEvent) -> AnswerEvent:
        """Fold `event` in; returns it, so a loop can fold and dispatch in one line."""
        kind = event.kind
        if kind == AnswerEventKind.STATUS:
            self.status = event.text
        elif kind == AnswerEventKind.DELTA:
            self.text += event.text
        elif kind == AnswerEventKind.SOURCES:
            self.citations = event.citations
        elif kind == AnswerEventKind.FOLLOWUPS:
            self.followups = event.followups
        elif kind == AnswerEventKind.DONE:
            self.done = True
            if event.answer is not None:
                self.answer = event.answer
                self.citations = event.answer.citations or self.citations
                self.followups = event.answer.followups or self.followups
        elif kind == AnswerEventKind.ERROR:
            self.failed = True
            self.error = event.text
        return event

    @property
    def ended(self) -> bool:
        """A `done` or an `error` came: nothing after it changes the answer."""
        return self.done or self.failed


__all__ = ["AnswerFold"]
