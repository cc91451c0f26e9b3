"""QueryRouter: chitchat, structural lookup or search. Lookups are caught by pattern before any LLM call."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from rag.models import Route
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.tokenizer import Tokenizer

_GREETING = re.compile(r"(안녕|반가|하이|hello|hi\b|좋은 아침|수고|잘 ?지내)", re.I)
_THANKS = re.compile(r"(고마워|고맙|감사|땡큐|thank|덕분)", re.I)
# Small talk that carries no question about rules: moods, weather, weekdays, laughter.
_SMALLTALK = re.compile(
    r"(기분|날씨|금요일|월요일|주말이라|배고|심심|ㅎㅎ|ㅋㅋ|좋다|피곤|졸려|너는 누구|넌 누구|뭐 할 수)"
)
_QUESTION_CUE = re.compile(r"(\?|몇|언제|어떻게|얼마|누가|무엇|뭐야|돼\?|되나|나요|까요|가능|해야|받아|있어|없어|알려)")


class RouteDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    route: Route
    chitchat_kind: str = ""  # greeting | thanks | other


class OfflineQueryRouter:
    """Pattern router: a pure reference → lookup; greetings and small talk with no rule words → chitchat."""

    def __init__(self, lookup: StructuralLookup, tokenizer: Tokenizer) -> None:
        self.lookup = lookup
        self.tokenizer = tokenizer

    async def run(self, question: str) -> RouteDecision:
        if self.lookup.parse(question) is not None:
            return RouteDecision(route=Route.LOOKUP)
        kind = self.chitchat_kind(question)
        if kind:
            return RouteDecision(route=Route.CHITCHAT, chitchat_kind=kind)
        return RouteDecision(route=Route.SEARCH)

    def chitchat_kind(self, question: str) -> str:
        if _QUESTION_CUE.search(question) and not _THANKS.search(question):
            return ""
        content = [t for t in self.tokenizer.tokens(question) if len(t) > 1]
        if _THANKS.search(question) and len(content) <= 3:
            return "thanks"
        if _GREETING.search(question) and len(content) <= 3:
            return "greeting"
        if _SMALLTALK.search(question) and len(content) <= 4:
            return "other"
        if not content:
            return "other"
        return ""
