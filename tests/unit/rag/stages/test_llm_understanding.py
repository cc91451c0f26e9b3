"""LlmQueryUnderstander: one structured call for enhance + route + plan; patterns and failures stay offline."""

import pytest

from rag.llm import LlmOutputInvalid
from rag.models import Message, Role, Route
from rag.retrieval.query import QueryAnalyzer
from rag.stages.contracts import Strategy
from rag.stages.enhancer import HistoryWindow, OfflineQueryEnhancer
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.router import OfflineQueryRouter
from rag.stages.understanding import LlmQueryUnderstander, OfflineQueryUnderstander

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"
HISTORY = (Message(role=Role.USER, content=LEAVE_QUESTION),
           Message(role=Role.ASSISTANT, content="1년간 80% 이상 출근하면 15일의 연차유급휴가를 받아요 [1]."))


def reply(**fields):
    base = {"standalone_question": LEAVE_QUESTION, "route": "search", "compound": False,
            "search_queries": [LEAVE_QUESTION], "keywords": ["연차유급휴가"], "intent": "연차 일수"}
    base.update(fields)
    return base


@pytest.fixture
def make_understander(samples):
    def make(llm, **switches):
        offline = OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(),
                                           router=OfflineQueryRouter(samples.lookup, samples.tokenizer),
                                           planner=OfflineQueryPlanner(samples.tokenizer))
        return LlmQueryUnderstander(llm, fallback=offline, lookup=samples.lookup, **switches)
    return make


@pytest.mark.parametrize(("question", "route"), [("취업규칙 제20조", Route.LOOKUP), ("제21조 보여줘", Route.LOOKUP),
                                                 ("안녕! 만나서 반가워", Route.CHITCHAT)])
async def test_references_and_small_talk_never_reach_the_llm(make_understander, scripted_llm, question, route):
    llm = scripted_llm()
    understood = await make_understander(llm).run(question, ())
    assert understood.decision.route == route
    assert llm.requests == []


async def test_one_fast_structured_call_routes_and_plans(make_understander, scripted_llm):
    llm = scripted_llm(replies=[reply(search_queries=[LEAVE_QUESTION, "연차유급휴가 일수 1년 근속"])])
    understood = await make_understander(llm).run(LEAVE_QUESTION, ())
    assert understood.decision.route == Route.SEARCH
    assert understood.plan.search_queries == (LEAVE_QUESTION, "연차유급휴가 일수 1년 근속")
    assert understood.plan.keywords == ("연차유급휴가",)
    assert len(llm.requests) == 1
    assert (llm.requests[0].tier, llm.requests[0].json_schema["required"][1]) == ("fast", "route")


async def test_without_history_the_question_is_searched_as_asked(make_understander, scripted_llm):
    llm = scripted_llm(replies=[reply(standalone_question="연차유급휴가 일수는?")])
    understood = await make_understander(llm).run(LEAVE_QUESTION, ())
    assert understood.enhanced.text == LEAVE_QUESTION
    assert not understood.enhanced.used_history


async def test_history_is_folded_into_a_standalone_question(make_understander, scripted_llm):
    standalone = "입사 후 3년 넘게 근속하면 연차유급휴가는 며칠인가?"
    llm = scripted_llm(replies=[reply(standalone_question=standalone, search_queries=[standalone])])
    understood = await make_understander(llm).run("그럼 3년 넘게 일하면?", HISTORY)
    assert understood.enhanced.text == standalone
    assert understood.enhanced.used_history
    assert understood.plan.search_queries == (standalone,)
    sent = llm.requests[0].messages[0].content
    assert LEAVE_QUESTION in sent and "그럼 3년 넘게 일하면?" in sent


async def test_history_is_cut_to_six_messages_of_300_characters(make_understander, scripted_llm):
    history = tuple(Message(role=Role.USER, content=f"질문{i} " + "가" * 400) for i in range(8))
    llm = scripted_llm(replies=[reply()])
    await make_understander(llm).run("그럼 그건?", history)
    sent = llm.requests[0].messages[0].content
    assert "질문1 " not in sent and "질문2 " in sent
    assert "가" * 300 not in sent


async def test_the_history_window_is_the_operators_to_set(make_understander, scripted_llm):
    history = tuple(Message(role=Role.USER, content=f"질문{i} " + "가" * 400) for i in range(8))
    llm = scripted_llm(replies=[reply()])
    await make_understander(llm, window=HistoryWindow(messages=2, chars=50)).run("그럼 그건?", history)
    sent = llm.requests[0].messages[0].content
    assert "질문5 " not in sent and "질문6 " in sent and "질문7 " in sent
    assert "가" * 50 not in sent and "가" * 40 in sent


async def test_a_compound_question_gets_one_query_per_part_after_the_whole(make_understander, scripted_llm):
    question = "병가는 며칠까지 쓸 수 있고 출장 숙박비 한도는 얼마야?"
    parts = ["병가는 며칠까지 쓸 수 있어?", "출장 숙박비 한도는 얼마야?"]
    llm = scripted_llm(replies=[reply(standalone_question=question, compound=True, sub_questions=parts,
                                      search_queries=["병가 일수", "국내 출장 숙박비 한도"])])
    plan = (await make_understander(llm).run(question, ())).plan
    assert plan.strategy == Strategy.MULTI
    assert plan.sub_questions == tuple(parts)
    assert plan.search_queries == (question, "병가 일수", "국내 출장 숙박비 한도")


async def test_a_vague_question_searches_its_hypothetical_passage(make_understander, scripted_llm):
    passage = "직원이 출장을 가는 경우 회사는 교통비, 숙박비, 일비를 지급한다."
    llm = scripted_llm(replies=[reply(standalone_question="출장 가면 뭐 나와?", vague=True,
                                      hypothetical_passage=passage, search_queries=["출장 가면 뭐 나와?"])])
    plan = (await make_understander(llm).run("출장 가면 뭐 나와?", ())).plan
    assert plan.search_queries == ("출장 가면 뭐 나와?", passage)
    assert plan.hypothetical_answer == passage


async def test_a_described_situation_reaches_the_llm_as_a_hint_from_the_intent_table(samples, scripted_llm):
    llm = scripted_llm(replies=[reply(), reply()])
    offline = OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(),
                                       router=OfflineQueryRouter(samples.lookup, samples.tokenizer),
                                       planner=OfflineQueryPlanner(samples.tokenizer))
    with_table = LlmQueryUnderstander(llm, fallback=offline, lookup=samples.lookup,
                                      analyzer=QueryAnalyzer(samples.tokenizer))
    await with_table.run("요즘 너무 지쳐서 좀 쉬고 싶어", ())
    await with_table.run("출장 숙박비 한도는 얼마야?", ())
    hinted, plain = (r.messages[0].content for r in llm.requests)
    assert "휴직" in hinted and hinted.index("</질문>") < hinted.index("휴직")
    assert "상황 표현 사전" not in plain


async def test_hyde_off_searches_only_the_question(make_understander, scripted_llm):
    passage = "직원이 출장을 가는 경우 회사는 교통비, 숙박비, 일비를 지급한다."
    llm = scripted_llm(replies=[reply(standalone_question="출장 가면 뭐 나와?", vague=True,
                                      hypothetical_passage=passage, search_queries=["출장 가면 뭐 나와?"])])
    plan = (await make_understander(llm, hyde=False).run("출장 가면 뭐 나와?", ())).plan
    assert plan.search_queries == ("출장 가면 뭐 나와?",)
    assert plan.hypothetical_answer == ""


async def test_a_repeated_question_is_understood_from_memory(make_understander, scripted_llm):
    llm = scripted_llm(replies=[reply(vague=True, hypothetical_passage="연차유급휴가는 15일로 한다.")])
    understander = make_understander(llm)
    first = await understander.run(LEAVE_QUESTION, ())
    again = await understander.run("입사 1년 지나면 연차 며칠 받아", ())
    assert again.plan == first.plan
    assert again.by == "memo"
    assert len(llm.requests) == 1


@pytest.mark.parametrize("failure", [LlmOutputInvalid("no tool call"), {"route": "somewhere"}])
async def test_malformed_output_falls_back_to_the_offline_understanding(make_understander, scripted_llm, failure):
    llm = scripted_llm(replies=[failure])
    understood = await make_understander(llm).run("병가 진단서는 언제 내야 해? 그리고 출장 숙박비 한도는 얼마야?", ())
    assert understood.by == "offline"
    assert understood.plan.sub_questions == ("병가 진단서는 언제 내야 해", "출장 숙박비 한도는 얼마야")


async def test_a_follow_up_that_becomes_a_reference_is_looked_up(make_understander, scripted_llm):
    history = (Message(role=Role.USER, content="취업규칙 제20조"), Message(role=Role.ASSISTANT, content="…"))
    llm = scripted_llm(replies=[reply(standalone_question="취업규칙 제21조", search_queries=["취업규칙 제21조"])])
    understood = await make_understander(llm).run("그럼 다음 조는 뭐라고 돼 있어?", history)
    assert (understood.decision.route, understood.lookup_query) == (Route.LOOKUP, "취업규칙 제21조")
