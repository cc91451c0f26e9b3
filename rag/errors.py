"""The regbot exception tree; catch by layer.

    RegbotError
     ├── IngestError          a file could not be read or indexed
     ├── RetrievalUnavailable an index (Chroma, BM25) cannot be reached or is missing
     ├── LlmUnavailable       the LLM failed after retries, or its breaker is open
     │    └── LlmStreamInterrupted  a stream failed after some text was delivered
     ├── ConfigError          settings that cannot work together
     └── EvalFileError        an eval file that cannot be read (the message names the file and line)
"""


class RegbotError(Exception):
    """Base of every error regbot raises on purpose."""


class IngestError(RegbotError):
    """A file could not be loaded, parsed or indexed; the message says why."""


class RetrievalUnavailable(RegbotError):
    """A retrieval backend is down or the index is missing; run `regbot ingest` first."""


class LlmUnavailable(RegbotError):
    """The LLM cannot answer now; stages fall back to their offline sibling."""


class LlmStreamInterrupted(LlmUnavailable):
    """A streamed answer broke off after some text was delivered; `partial_text` is what arrived.

    Streams are never retried once text has been shown, so the caller decides whether to keep
    the partial answer (with a note) or fall back.
    """

    def __init__(self, partial_text: str, reason: str = "") -> None:
        super().__init__(f"the LLM stream broke off after {len(partial_text)} characters: {reason}")
        self.partial_text = partial_text


class ConfigError(RegbotError):
    """The configuration is inconsistent; the message names the setting to fix."""


class EvalFileError(RegbotError):
    """An eval file is missing or malformed; the message is one line naming the file and the line."""
