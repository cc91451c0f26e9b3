"""Query understanding: enhance (fold in history) → route → plan, as one step.

The LLM version makes these three decisions in ONE structured call on the fast model, so the common path
spends one call before retrieval instead of three. References ("취업규칙 제20조") and obvious small talk are
caught by patterns first and never reach the LLM. The offline version runs the three offline role classes
(`OfflineQueryEnhancer`, `OfflineQueryRouter`, `OfflineQueryPlanner`) in the order the pipeline always has.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from pydantic import BaseModel, Field, field_validator

from rag.lang import FOREIGN, Glossary, foreign_smalltalk_kind
from rag.lang.asks import QuestionFacets, QuestionReader
from rag.lang.reference import REFERENCE_WORD
from rag.llm import LlmProvider, fence
from rag.models import Message, Role, Route
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.query import QueryAnalyzer
from rag.stages.contracts import EnhancedQuery, QueryPlan, QueryUnderstanding, RouteDecision, Strategy
from rag.stages.enhancer import HistoryWindow, OfflineQueryEnhancer, recent_history
from rag.stages.llm_stage import LlmOverOffline
from rag.stages.planner import MAX_PARTS, OfflineQueryPlanner
from rag.stages.router import OfflineQueryRouter
from rag.text import collapse_spaces, comparable_text, normalize_text

# Worded as a checklist of the three decisions with the two traps named (rewriting single-hop questions,
# splitting questions that only look compound), because those are where small models go wrong.
UNDERSTAND_PROMPT = """\
당신은 회사 규정·법령 안내 봇의 질문 분석기입니다. <질문>(사용자의 마지막 질문)을 분석해 \
record_result 도구로만 답하세요.

1. standalone_question: 대화 기록이 있으면, 대명사·생략("그럼", "그건", "3년이면?")을 앞선 대화로 채워 \
혼자 읽어도 뜻이 통하는 한 문장으로 바꾸세요. 대화 기록이 없으면 질문을 그대로 두세요. \
질문에 없는 조건을 지어내지 마세요.
2. route: 인사·감사·잡담처럼 규정과 무관하면 "chitchat", \
특정 규정의 조·장·별표를 그대로 보여 달라는 요청이면 "lookup", 그 밖의 규정 질문은 "search". \
chitchat이면 chitchat_kind(greeting|thanks|other)를 채우세요.
3. 검색 계획:
   - compound: 서로 다른 두세 가지를 한꺼번에 묻는 질문일 때만 true. 한 가지를 여러 단어로 묻는 질문은 false입니다.
   - sub_questions: compound일 때만, 각 부분을 완전한 질문으로(최대 3개).
   - search_queries: compound가 아니면 1~2개(첫째는 질문 그대로, 둘째는 필요할 때만 규정 용어로 바꾼 검색어). \
compound이면 부분마다 1개씩, 부분 사이의 연결을 살려서 쓰세요(예: "퇴직금에 대한 소득세", "근로계약서 보관 기간").
   - keywords: 규정에서 찾을 핵심어. intent: 무엇을 알고 싶은지 한 줄. answer_style: concise|detailed|steps.
   - vague: 질문이 너무 막연해 검색어가 떠오르지 않을 때만 true로 하고, hypothetical_passage에 그 답이 \
들어 있을 법한 규정 조문 문체의 2~3문장을 쓰세요. 그 밖에는 빈 문자열.
"""

_LATIN = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_MAX_BARE = 80  # a follow-up button's reference is short; longer text is a question of its own

# The intent table's words for a situation the question describes (rag/data/intents.yaml): a hint, not a rule.
INTENT_HINT = "참고(상황 표현 사전): 이 질문은 다음 규정 용어와 관련될 수 있습니다: {words}"

UNDERSTAND_SCHEMA = {
    "type": "object",
    "properties": {
        "standalone_question": {"type": "string"},
        "route": {"type": "string", "enum": ["chitchat", "lookup", "search"]},
        "chitchat_kind": {"type": "string", "enum": ["greeting", "thanks", "other", ""]},
        "intent": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "compound": {"type": "boolean"},
        "sub_questions": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_PARTS},
        "search_queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_PARTS},
        "answer_style": {"type": "string", "enum": ["concise", "detailed", "steps"]},
        "vague": {"type": "boolean"},
        "hypothetical_passage": {"type": "string"},
    },
    "required": ["standalone_question", "route", "compound", "search_queries"],
}


class OfflineQueryUnderstander:
    """Enhance, route (re-routing the enhanced text when history was folded in), then plan — all offline."""

    def __init__(self, *, enhancer: OfflineQueryEnhancer, router: OfflineQueryRouter,
                 planner: OfflineQueryPlanner, glossary: Glossary | None = None,
                 reader: QuestionReader | None = None) -> None:
        self.enhancer = enhancer
        self.router = router
        self.planner = planner
        self.glossary = glossary  # reads English and Vietnamese questions (None: every question is Korean)
        self.reader = reader or QuestionReader()

    def language_of(self, question: str, text: str, history: tuple[Message, ...] = ()) -> dict[str, object]:
        """`language`, `korean_query`, `topics` and `topic_words` of the question (`text`, its standalone form,
        is translated). A bare reference (a tapped follow-up button, "근로기준법 제56조(연장 근로)") says nothing of
        the asker's language: it takes the language of the conversation's last user turn that does."""
        if self.glossary is None:
            return {}
        language = self.glossary.read(question).language
        if self._bare_reference(question, history):
            language = next((self.glossary.read(m.content).language for m in reversed(history)
                             if m.role == Role.USER and not self._bare_reference(m.content, ())), language)
        if language not in FOREIGN:
            return {"language": language}
        read = self.glossary.read(text, language)
        # The topics name the question in the asker's words: an LLM's standalone form may be Korean, so they come
        # from the question as asked when the standalone form names none.
        named = read if read.topics or text == question else self.glossary.read(question, language)
        return {"language": language, "korean_query": read.korean_query, "topics": named.topics,
                "topic_words": named.topic_words}

    def _bare_reference(self, question: str, history: tuple[Message, ...]) -> bool:
        """True for a reference with no words of its own around it: no Latin letters, nothing after the
        reference but its title in parentheses, and one the lookup reads."""
        text = question.strip()
        if not text or len(text) > _MAX_BARE or _LATIN.search(text):
            return False
        if text.endswith(")") and "(" in text:
            text = text[:text.rindex("(")].rstrip()  # "제56조(연장 근로)": the button's article title
        words = text.split()
        if not words or not REFERENCE_WORD.fullmatch(words[-1]):  # "… 보여줘": Korean words of its own
            return False
        lookup = self.router.lookup
        return (lookup.parse(question) is not None or lookup.names_no_regulation(question)
                or lookup.followup(question, history) is not None)

    async def run(self, question: str, history: tuple[Message, ...], *,
                  forced: Route | None = None) -> QueryUnderstanding:
        enhanced = await self.enhancer.run(question, history)
        facets = self.language_of(question, enhanced.text, history)
        decision, lookup_query = await self.route(question, enhanced, history, forced=forced,
                                                  language=str(facets.get("language", "ko")),
                                                  korean_query=str(facets.get("korean_query", "")))
        plan = await self.planner.run(enhanced.text)
        return QueryUnderstanding(enhanced=enhanced, decision=decision, plan=plan, lookup_query=lookup_query,
                                  search_if_not_found=forced is None, **facets,
                                  facets=self.facets(enhanced, plan, language=facets.get("language", "ko"),
                                                     korean_query=facets.get("korean_query", "")))

    def facets(self, enhanced: EnhancedQuery, plan: QueryPlan, *, language: object = "ko",
               korean_query: object = "") -> QuestionFacets:
        """What the question asks: read from the question the answer is read against (a foreign question's Korean
        words; a follow-up's amount and units from the user's own words), each part of a compound one apart."""
        foreign = language in FOREIGN
        question = str(korean_query) if foreign and korean_query else enhanced.text
        own = enhanced.original if enhanced.used_history and not foreign and not plan.sub_questions else ""
        read = self.reader.read(question, context=enhanced.context, asked=own)
        parts = tuple(self.reader.read(part) for part in plan.sub_questions)
        return read.model_copy(update={"leans_on_history": enhanced.used_history, "parts": parts})

    async def route(self, question: str, enhanced: EnhancedQuery, history: tuple[Message, ...], *,
                    forced: Route | None, language: str = "ko", korean_query: str = "") -> tuple[RouteDecision, str]:
        """The route, and the text a lookup resolves: the one place a turn's route is decided (the router's
        patterns propose; the conversation and the asker's language settle it)."""
        if forced is not None:
            decision = RouteDecision(route=forced)
        else:
            decision = await self.router.run(question)
            if decision.route == Route.SEARCH and enhanced.used_history:
                again = await self.router.run(enhanced.text)
                decision = RouteDecision(route=Route.SEARCH) if again.route == Route.CHITCHAT else again
        lookup_query = question
        if forced in (None, Route.LOOKUP) and self.router.lookup.parse(question) is None:
            # "그럼 21조는?" / "전문 보여줘" after a turn about 취업규칙: a lookup in the regulation the conversation
            # is about, read from the history the turn carries.
            resolved = self.router.lookup.followup(question, history)
            if resolved is not None:
                decision, lookup_query = RouteDecision(route=Route.LOOKUP), resolved[0]
            elif forced is None and self.router.lookup.names_no_regulation(question):
                decision = RouteDecision(route=Route.LOOKUP)  # "제60조": the regulations that hold it
        if forced is None and language in FOREIGN and decision.route != Route.LOOKUP:
            # The Korean router's small-talk cues misread other languages ("khi", "thì" hold its "hi"): a question
            # that names a glossary topic is searched; otherwise only English or Vietnamese small talk is chat.
            kind = "" if korean_query else foreign_smalltalk_kind(question)
            decision = RouteDecision(route=Route.CHITCHAT, chitchat_kind=kind) if kind \
                else RouteDecision(route=Route.SEARCH)
        return decision, lookup_query

    def chitchat_kind(self, question: str) -> str:
        """The kind of small talk the message is, or "" (for the LLM understander's pattern shortcut)."""
        return self.router.chitchat_kind(question)


class _UnderstandingReply(BaseModel):
    """The LLM's JSON, leniently read: missing optional fields take defaults, blank strings are dropped."""

    standalone_question: str = ""
    route: Route
    chitchat_kind: str = ""
    intent: str = ""
    keywords: list[str] = Field(default_factory=list)
    compound: bool = False
    sub_questions: list[str] = Field(default_factory=list)
    search_queries: list[str] = Field(default_factory=list)
    answer_style: str = "concise"
    vague: bool = False
    hypothetical_passage: str = ""

    @field_validator("keywords", "sub_questions", "search_queries")
    @classmethod
    def _drop_blank(cls, values: list[str]) -> list[str]:
        return [collapse_spaces(normalize_text(v)).strip() for v in values if v and v.strip()]


_comparable = comparable_text


class LlmQueryUnderstander(LlmOverOffline[OfflineQueryUnderstander]):
    """One fast structured call that enhances, routes and plans; patterns first, the offline path on failure.

    Results for questions without history are memoised in-process (bounded), so a repeated question — and its
    HyDE passage, when the question was vague — costs no second call.
    """

    stage = "understand"

    def __init__(self, llm: LlmProvider, *, fallback: OfflineQueryUnderstander, lookup: StructuralLookup,
                 timeout_s: float = 10.0, hang_s: float = 2.5, memo_size: int = 256,
                 prompt: str = UNDERSTAND_PROMPT, hyde: bool = True, window: HistoryWindow | None = None,
                 analyzer: QueryAnalyzer | None = None) -> None:
        super().__init__(llm, fallback=fallback, prompt=prompt, timeout_s=timeout_s, hang_s=hang_s)
        self.lookup = lookup
        self.hyde = hyde  # search the model's hypothetical answer for a vague question (REGBOT_ENABLE_HYDE)
        self.window = window or HistoryWindow()
        self.analyzer = analyzer  # its intent table gives the prompt hints
        self.memo_size = memo_size
        self._memo: OrderedDict[str, QueryUnderstanding] = OrderedDict()

    async def run(self, question: str, history: tuple[Message, ...], *,
                  forced: Route | None = None) -> QueryUnderstanding:
        if forced == Route.LOOKUP or (forced is None and (self._caught_by_pattern(question)
                                                          or self.lookup.followup(question, history) is not None)):
            understood = await self.fallback.run(question, history, forced=forced)
            return understood.model_copy(update={"by": "pattern"})
        recent = recent_history(history, self.window)
        memo_key = _comparable(question) if not recent else ""
        if memo_key and memo_key in self._memo:
            self._memo.move_to_end(memo_key)
            return self._memo[memo_key].model_copy(update={"by": "memo"})
        reply = await self.ask(self._user_message(question, recent, self._hint(question)), _UnderstandingReply,
                               schema=UNDERSTAND_SCHEMA, max_tokens=700)
        if reply is None:
            return await self.fallback.run(question, history, forced=forced)
        understood = self._understanding(question, bool(recent), reply, forced)
        if memo_key:
            self._memo[memo_key] = understood
            while len(self._memo) > self.memo_size:
                self._memo.popitem(last=False)
        return understood

    def _caught_by_pattern(self, question: str) -> bool:
        """A structural reference, or small talk with no question in it."""
        return (self.lookup.parse(question) is not None or self.lookup.names_no_regulation(question)
                or self.fallback.router.asks_changes(question) or bool(self.fallback.chitchat_kind(question)))

    def _hint(self, question: str) -> str:
        """The intent table's words for the situation the question describes, or ""."""
        if self.analyzer is None:
            return ""
        analyzed = self.analyzer.analyze(question)
        intents = [i for i in self.analyzer.intents if i.name in analyzed.intents]
        words = list(dict.fromkeys(w for i in intents for w in i.words_for(analyzed.audience)))
        return INTENT_HINT.format(words=", ".join(words)) if words else ""

    @staticmethod
    def _user_message(question: str, recent: list[Message], hint: str = "") -> str:
        tail = fence("질문", question) + (f"\n\n{hint}" if hint else "")
        if not recent:
            return "대화 기록: 없음\n\n" + tail
        # "[user]", not "user:": fence() quotes line-start role labels, so none inside a message passes as a turn.
        lines = "\n".join(f"[{m.role.value}] {m.content}" for m in recent)
        return "대화 기록(오래된 것부터):\n" + fence("대화 기록", lines) + "\n\n" + tail

    def _understanding(self, question: str, has_history: bool, reply: _UnderstandingReply,
                       forced: Route | None) -> QueryUnderstanding:
        standalone = collapse_spaces(normalize_text(reply.standalone_question)).strip() if has_history else ""
        # Without history the question is searched as asked: LLM rewrites of single-hop questions are noise.
        text = standalone or question
        enhanced = EnhancedQuery(text=text, original=question,
                                 used_history=has_history and _comparable(text) != _comparable(question))
        route = forced or reply.route
        lookup_query = question
        if route == Route.SEARCH and enhanced.used_history and self.lookup.parse(text) is not None:
            route, lookup_query = Route.LOOKUP, text  # "그럼 21조는?" after a lookup of 제20조
        elif route == Route.LOOKUP:
            lookup_query = text
        kind = reply.chitchat_kind if reply.chitchat_kind in ("greeting", "thanks", "other") else "other"
        decision = RouteDecision(route=route, chitchat_kind=kind if route == Route.CHITCHAT else "")
        plan = self._plan(text, reply)
        language = self.fallback.language_of(question, text)
        facets = self.fallback.facets(enhanced, plan, language=language.get("language", "ko"),
                                      korean_query=language.get("korean_query", ""))
        return QueryUnderstanding(enhanced=enhanced, decision=decision, plan=plan, lookup_query=lookup_query,
                                  search_if_not_found=forced is None, by="llm", facets=facets, **language)

    def _plan(self, text: str, reply: _UnderstandingReply) -> QueryPlan:
        keywords = tuple(dict.fromkeys(reply.keywords))
        style = reply.answer_style if reply.answer_style in ("concise", "detailed", "steps") else "concise"
        intent = reply.intent or text
        parts = list(dict.fromkeys(reply.sub_questions))[:MAX_PARTS]
        if reply.compound and len(parts) >= 2:
            queries = reply.search_queries if len(reply.search_queries) == len(parts) else parts
            # The whole question first, then one query per part: the pipeline reads the parts' evidence from [1:].
            return QueryPlan(intent=intent, keywords=keywords, search_queries=(text, *queries),
                             sub_questions=tuple(parts), strategy=Strategy.MULTI, answer_style=style)
        extra = ""
        vague = reply.vague and self.hyde
        if vague and reply.hypothetical_passage.strip():
            extra = collapse_spaces(normalize_text(reply.hypothetical_passage)).strip()
        else:
            extra = next((q for q in reply.search_queries if _comparable(q) != _comparable(text)), "")
        queries = (text, extra) if extra else (text,)
        return QueryPlan(intent=intent, keywords=keywords, search_queries=queries, answer_style=style,
                         hypothetical_answer=extra if vague else "")
