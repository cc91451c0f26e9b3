"""What the pipeline asks retrieval for: a folded follow-up as its own words with what it leans on; a compound
question as one typed query per part."""

from rag.models import Route, Scope, Turn
from rag.pipeline import AnswerPipeline
from rag.retrieval.planned import PlannedQuery
from rag.stages.contracts import EnhancedQuery, QueryPlan, QueryUnderstanding, RouteDecision, Strategy


def understanding(enhanced: EnhancedQuery, plan: QueryPlan) -> QueryUnderstanding:
    return QueryUnderstanding(enhanced=enhanced, decision=RouteDecision(route=Route.SEARCH), plan=plan,
                              lookup_query=enhanced.original)


def test_a_folded_follow_up_is_searched_as_asked_with_its_context():
    enhanced = EnhancedQuery(text="구제명령 안 따라 그 돈은 최대 얼마까지야?", original="그 돈은 최대 얼마까지야?",
                             used_history=True, context="구제명령 안 따라 이행강제금을 부과합니다")
    plan = QueryPlan(intent=enhanced.text, search_queries=(enhanced.text,))
    request = AnswerPipeline._retrieval_request(Turn(turn_id="t", text=enhanced.original, scope=Scope()),
                                                understanding(enhanced, plan))
    assert request.queries == (PlannedQuery(text="그 돈은 최대 얼마까지야?"),)
    assert request.context == "구제명령 안 따라 이행강제금을 부과합니다"


def test_each_part_of_a_compound_question_is_its_own_typed_query():
    question = "퇴직금 세금은 어떻게 되고, 그리고 해고 절차는?"
    enhanced = EnhancedQuery(text=question, original=question)
    plan = QueryPlan(intent=question, search_queries=(question, "퇴직금 세금", "해고 절차"),
                     sub_questions=("퇴직금 세금은?", "해고 절차는?"), strategy=Strategy.MULTI)
    request = AnswerPipeline._retrieval_request(Turn(turn_id="t", text=question, scope=Scope()),
                                                understanding(enhanced, plan))
    assert [(q.text, q.part) for q in request.queries] == [(question, None), ("퇴직금 세금", 0), ("해고 절차", 1)]
    assert request.parts == ("퇴직금 세금은?", "해고 절차는?")
    assert request.context == ""
