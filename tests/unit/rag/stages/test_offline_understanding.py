"""The offline enhancer, router and planner, and the understander that runs them in order."""

import pytest

from rag.lang import load_glossary
from rag.models import Message, Role, Route
from rag.stages.contracts import Strategy
from rag.stages.enhancer import OfflineQueryEnhancer
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.router import OfflineQueryRouter
from rag.stages.understanding import OfflineQueryUnderstander

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"
HISTORY = (Message(role=Role.USER, content=LEAVE_QUESTION),
           Message(role=Role.ASSISTANT, content="1년간 80% 이상 출근하면 15일의 연차유급휴가를 받아요 [1]."))


@pytest.fixture
def understander(samples):
    return OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(),
                                    router=OfflineQueryRouter(samples.lookup, samples.tokenizer),
                                    planner=OfflineQueryPlanner(samples.tokenizer))


class TestOfflineQueryRouter:
    @pytest.mark.parametrize(("question", "kind"), [
        ("안녕! 만나서 반가워", "greeting"),
        ("좋은 아침이에요", "greeting"),
        ("와 고마워요 👍", "thanks"),
        ("내일 쉬는 날이라 신난다 ㅎㅎ", "other"),
        ("이제 그만할게! 고생했어, 다음에 봐", "goodbye"),
        ("잠깐만", "pause"),
        ("ㅋㅋ", "reaction"),
        ("네 알겠습니다", "reaction"),
        ("앗 죄송해요, 잘못 보냈네요", "apology"),
        ("넌 누구니?", "identity"),
        ("혹시 AI야?", "identity"),
        ("뭘 물어볼 수 있어?", "capability"),
        ("넌 무슨 문서를 바탕으로 답해?", "capability"),  # what it answers from: the indexed documents
        ("어디서 정보를 가져오는 거예요?", "capability"),
        ("이 챗봇은 누가 만들었어? 무슨 자료로 답하는 거야?", "identity"),
        ("어떻게 써?", "usage"),
        ("다음에 또 물어볼게", "goodbye"),
        ("오늘도 수고 많으세요~", "goodbye"),  # spaced as people type it: 수고 많다 is 수고많다
        ("너 몇 살이야?", "identity"),
        ("너 어떤 규정 알고 있어?", "capability"),
        ("어떤 규정들이 등록돼 있어?", "capability"),
        ("너 똑똑하다", "praise"),
        ("답변이 틀렸어", "complaint"),
        ("별로 도움이 안 됐어", "complaint"),
        ("테스트", "test"),
        ("반가워요! 여기서는 뭘 물어보면 돼요?", "capability"),  # a greeting is no regulation topic
        ("아까 알려준 거 틀렸던데? 조문 번호가 완전 다르잖아", "complaint"),
        ("내일 서울 날씨 어때?", "off_topic"),  # asks for what no regulation holds: declined, not chatted
    ])
    async def test_small_talk_is_chitchat(self, samples, question, kind):
        decision = await OfflineQueryRouter(samples.lookup, samples.tokenizer).run(question)
        assert (decision.route, decision.chitchat_kind) == (Route.CHITCHAT, kind)

    @pytest.mark.parametrize("question", ["취업규칙 제20조", "여비 규정 별표 2", "취업규칙 20조 1항 보여줘",
                                          "3-1-24"])  # a rule code a sample carries
    async def test_references_are_lookups(self, samples, question):
        assert (await OfflineQueryRouter(samples.lookup, samples.tokenizer).run(question)).route == Route.LOOKUP

    @pytest.mark.parametrize("question", [LEAVE_QUESTION, "취업규칙 연차 규정 알려줘", "고마운데 병가는 며칠이야?",
                                          "연차?", "안녕하세요, 연차 며칠이에요?", "연차 어떻게 써?",
                                          "잠깐, 병가는 며칠이야?", "출장비 정산할 때 어떤 자료를 보고 계산해?",
                                          # the same words around a regulation question
                                          "출장비 최고 한도", "수습 테스트 기간에도 연차 있어?", "몇 살부터 정년이야?",
                                          "이 답변 틀린 것 같은데 연차는 15일 아니야?", "병가 나중에 또 쓸 수 있어?",
                                          "아까 알려준 거 틀렸던데? 연차는 며칠이야?"])
    async def test_questions_about_rules_are_searched(self, samples, question):
        assert (await OfflineQueryRouter(samples.lookup, samples.tokenizer).run(question)).route == Route.SEARCH


class TestOfflineQueryPlanner:
    async def test_splits_a_compound_question_into_its_parts(self, samples):
        plan = await OfflineQueryPlanner(samples.tokenizer).run(
            "병가 진단서는 언제 내야 해? 그리고 출장 숙박비 한도는 얼마야?")
        assert plan.strategy == Strategy.MULTI
        assert plan.sub_questions == ("병가 진단서는 언제 내야 해", "출장 숙박비 한도는 얼마야")
        assert plan.search_queries[1:] == plan.sub_questions

    @pytest.mark.parametrize(("question", "parts"), [
        ("병가는 며칠이고 출장 숙박비 한도는 얼마야?", ("병가는 며칠", "출장 숙박비 한도는 얼마야")),
        ("병가를 어기면 어떤 징계를 받는지, 그리고 월급은 몇 번 줘?",
         ("병가를 어기면 어떤 징계를 받는지", "월급은 몇 번 줘")),
        ("병가 신청 절차가 어떻게 되고, 출장 숙박비는 얼마까지 나와?",
         ("병가 신청 절차가 어떻게 돼", "출장 숙박비는 얼마까지 나와")),
        ("휴가 신청서에는 뭘 적어야 하고, 출장 숙박비는 얼마까지 나와?",
         ("휴가 신청서에는 뭘 적어야 해", "출장 숙박비는 얼마까지 나와")),
    ])
    async def test_splits_at_a_question_word_joined_by_이고_and_keeps_a_one_noun_part(self, samples, question, parts):
        assert (await OfflineQueryPlanner(samples.tokenizer).run(question)).sub_questions == parts

    @pytest.mark.parametrize("question", [
        LEAVE_QUESTION, "연차랑 병가 차이가 뭐야?",
        "회사 규정 위반을 신고하고 싶은데, 신고했다고 불이익 받을까 봐 걱정돼",  # 하고 of a verb, not a join
        "출장 가면 숙박비는 얼마까지 나와? 본사 직원이야",  # what follows the "?" is context, not a question
        "출장 서류를 챙기고, 숙박비 영수증은 어디에 내?",  # the clause before "고," asks nothing
    ])
    async def test_keeps_a_single_question_whole(self, samples, question):
        plan = await OfflineQueryPlanner(samples.tokenizer).run(question)
        assert plan.strategy == Strategy.SINGLE
        assert plan.search_queries == (question,)


class TestOfflineQueryEnhancer:
    async def test_folds_the_previous_question_into_a_leaning_follow_up(self):
        enhanced = await OfflineQueryEnhancer().run("그럼 3년 넘게 일하면?", HISTORY)
        assert enhanced.used_history
        assert enhanced.text == "입사 1년 지나면 연차 며칠 받아 그럼 3년 넘게 일하면?"

    async def test_leaves_a_question_without_history_alone(self):
        enhanced = await OfflineQueryEnhancer().run("그럼 3년 넘게 일하면?", ())
        assert (enhanced.text, enhanced.used_history) == ("그럼 3년 넘게 일하면?", False)

    async def test_leaves_a_standalone_question_alone_despite_history(self):
        enhanced = await OfflineQueryEnhancer().run("출장 숙박비 한도는 얼마까지 지급돼?", HISTORY)
        assert not enhanced.used_history


class TestOfflineQueryUnderstander:
    async def test_plans_the_enhanced_question(self, understander):
        understood = await understander.run("그럼 3년 넘게 일하면?", HISTORY)
        assert understood.decision.route == Route.SEARCH
        assert understood.plan.search_queries == ("입사 1년 지나면 연차 며칠 받아 그럼 3년 넘게 일하면?",)

    async def test_a_forced_lookup_skips_routing(self, understander):
        understood = await understander.run("연차", (), forced=Route.LOOKUP)
        assert (understood.decision.route, understood.lookup_query) == (Route.LOOKUP, "연차")

    async def test_an_article_without_a_regulation_is_a_lookup_unless_the_conversation_names_one(self, understander):
        alone = await understander.run("제21조 보여줘", ())
        assert (alone.decision.route, alone.lookup_query) == (Route.LOOKUP, "제21조 보여줘")
        about_rules = (Message(role=Role.USER, content="취업규칙 제20조"),
                       Message(role=Role.ASSISTANT, content="**취업규칙 제20조(연차유급휴가)** [1] …"))
        follow_up = await understander.run("제21조 보여줘", about_rules)
        assert (follow_up.decision.route, follow_up.lookup_query) == (Route.LOOKUP, "취업규칙 제21조 보여줘")


class TestLanguageOfABareReference:
    """A tapped follow-up button or a typed bare reference carries no language of its own: the conversation's."""

    @pytest.fixture
    def reader(self, samples):
        return OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(),
                                        router=OfflineQueryRouter(samples.lookup, samples.tokenizer),
                                        planner=OfflineQueryPlanner(samples.tokenizer), glossary=load_glossary())

    @staticmethod
    def after(question: str) -> tuple[Message, ...]:
        return (Message(role=Role.USER, content=question),
                Message(role=Role.ASSISTANT, content="**취업규칙 제20조(연차유급휴가)** [1] …"))

    @pytest.mark.parametrize("question", ["취업규칙 제21조", "취업규칙 제21조(휴가)", "제21조"])
    async def test_a_bare_reference_after_an_english_turn_is_english(self, reader, question):
        history = self.after("How much annual leave do I get after one year?")
        understood = await reader.run(question, history)
        assert (understood.language, understood.decision.route) == ("en", Route.LOOKUP)

    async def test_a_bare_reference_after_a_vietnamese_turn_is_vietnamese(self, reader):
        history = self.after("Tôi được nghỉ phép bao nhiêu ngày mỗi năm?")
        assert (await reader.run("취업규칙 제21조", history)).language == "vi"

    async def test_a_bare_reference_after_a_korean_turn_or_alone_is_korean(self, reader):
        assert (await reader.run("취업규칙 제21조", self.after(LEAVE_QUESTION))).language == "ko"
        assert (await reader.run("취업규칙 제21조", ())).language == "ko"

    async def test_the_last_turn_with_words_of_its_own_decides_past_an_earlier_tap(self, reader):
        history = (*self.after("How much annual leave do I get after one year?"), *self.after("취업규칙 제20조"))
        assert (await reader.run("취업규칙 제21조", history)).language == "en"

    @pytest.mark.parametrize("question", ["취업규칙 제21조 보여줘", "PC 반납은 언제까지 해야 해?",
                                          "OT 수당은 어떻게 계산돼?", "연차는 며칠이야?"])
    async def test_a_korean_question_in_an_english_conversation_stays_korean(self, reader, question):
        history = self.after("How much annual leave do I get after one year?")
        assert (await reader.run(question, history)).language == "ko"
