"""SearchState: what the steps of the search route hand on to each other (rag/pipeline.py, `search_steps`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.lang import Framing
from rag.models import Answer, Citation, Hit, Turn
from rag.retrieval.planned import RetrievalRequest, RetrievalResult
from rag.stages.contracts import DraftAnswer, GenerationInput, GradeResult, QueryUnderstanding, VerificationResult


@dataclass
class SearchState:
    """What the search steps hand on: each step reads what the ones before it filled. A step that ends the turn
    sets `answer`; the pipeline emits it as `done`."""

    turn: Turn
    understood: QueryUnderstanding
    said: Framing  # status lines and notes in the asker's language
    wanted: RetrievalRequest | None = None
    result: RetrievalResult | None = None
    grade: GradeResult | None = None
    request: GenerationInput | None = None
    draft: DraftAnswer | None = None
    verified: VerificationResult | None = None
    text: str = ""  # the answer as it grows: verified text, then the legal part and the amendment notes
    citations: tuple[Citation, ...] = ()
    notes: list[str] = field(default_factory=list)  # user-facing lines under the answer (degraded, hedged)
    answer: Answer | None = None

    @property
    def question(self) -> str:
        """The standalone question every stage judges against (never a rewrite)."""
        return self.understood.enhanced.text

    @property
    def asked(self) -> str:
        """The user's own words when the question was made standalone from the conversation, else "": the grade
        reads them beside the standalone question, so the earlier question's words cannot carry an unrelated one."""
        enhanced = self.understood.enhanced
        return enhanced.original if enhanced.used_history else ""

    @property
    def hits(self) -> list[Hit]:
        return list(self.result.hits) if self.result is not None else []

    @property
    def parts(self) -> int:
        return max(len(self.understood.plan.sub_questions), 1)

    @property
    def hedged(self) -> bool:
        """Not passed, but the closest article is close enough to quote as such."""
        return self.grade is not None and not self.grade.passed

    @property
    def quoted_offline(self) -> bool:
        """The answer quotes the articles (the extractive generator): no LLM verify or follow-ups call is needed,
        the offline siblings judge quotes."""
        return self.draft is not None and self.draft.by != "llm"
