import unicodedata

import pytest

from rag.lang import load_glossary
from rag.models import Message, Role
from rag.retrieval.query import (
    ConversationFolder,
    QueryAnalyzer,
    load_audiences,
    load_fold_fit,
    load_intents,
    load_synonyms,
)


@pytest.fixture(scope="module")
def analyzer(kiwi_tokenizer):
    return QueryAnalyzer(kiwi_tokenizer)


def test_colloquial_word_brings_the_regulation_term(analyzer):
    analyzed = analyzer.analyze("야근하면 돈 더 줘?")
    assert "연장근로" in analyzed.expansion
    assert "야근" in analyzed.tokens


def test_phrase_key_matches_words_spread_over_the_question(analyzer):
    analyzed = analyzer.analyze("공장이 한 달 동안 문을 닫는대")
    assert "휴업" in analyzed.expansion


def test_conjugated_slang_matches_by_its_stem_in_the_raw_text(analyzer):
    assert "해고" in analyzer.analyze("어제 회사에서 짤렸어").expansion


def test_a_common_abbreviation_brings_the_statute_word(analyzer):
    assert "노동조합" in analyzer.analyze("노조에는 며칠 앞서 통보해야 해?").expansion
    assert "소멸" in analyzer.analyze("안 쓴 연차는 없어져?").expansion
    assert "국외" in analyzer.analyze("개인정보가 해외로 넘어가도 돼?").expansion
    assert "누설" in analyzer.analyze("일하면서 알게 된 얘기 해도 돼?").expansion
    assert "사범대학" in analyzer.analyze("사범대 나오면 선생님 돼?").expansion
    assert "벌금" in analyzer.analyze("안 주면 처벌 받아?").expansion


def test_expansion_never_outweighs_the_users_own_words(analyzer):
    weights = analyzer.analyze("야근하면 돈 더 줘?").weighted_tokens()
    assert weights["야근"] == 1.0
    assert max(weights[t] for t in analyzer.analyze("야근하면 돈 더 줘?").expansion) < 1.0


def test_an_entry_with_many_terms_shares_one_words_weight(kiwi_tokenizer):
    analyzer = QueryAnalyzer(kiwi_tokenizer, {"월차": ["연차"], "야근": ["연장근로", "야간근로"]})
    one = analyzer.analyze("월차").weighted_tokens(expansion_weight=0.6)
    many = analyzer.analyze("야근").weighted_tokens(expansion_weight=0.6)
    assert one["연차"] == pytest.approx(0.6)
    assert many["야간근로"] < one["연차"]


def test_audience_hint_from_who_is_asking(analyzer):
    assert analyzer.analyze("교수인데 외부 강의 나가도 돼?").audience == "faculty"
    assert analyzer.analyze("공무원인데 투잡 돼?").audience == "civil_servant"
    assert analyzer.analyze("연차 며칠이야?").audience == ""


def test_earlier_turn_counts_less_than_the_question(analyzer):
    analyzed = analyzer.analyze("그럼 3년 넘게 일하면?", context="연차휴가는 며칠이야?")
    weights = analyzed.weighted_tokens()
    assert weights["연차휴가"] < 1.0
    assert "연차휴가" in analyzed.dense_text and "3년" in analyzed.dense_text


def test_nfd_question_is_analysed_like_nfc(analyzer):
    nfd = unicodedata.normalize("NFD", "퇴직금 언제 줘?")
    assert analyzer.analyze(nfd).tokens == analyzer.analyze("퇴직금 언제 줘?").tokens


def test_shipped_tables_load():
    assert load_synonyms()["퇴직금"] == ["퇴직급여", "퇴직금"]
    assert load_audiences()["교수"] == "faculty"


@pytest.mark.parametrize("question", [
    "그럼 3년 넘게 일하면?", "그건 언제까지 신청하면 돼?", "6년 넘게 근무하면?", "석사생도 똑같아?",
    "정해지고 나면 언제부터 적용돼?",
])
def test_follow_up_that_leans_on_history_is_folded(kiwi_tokenizer, question):
    folded = ConversationFolder(kiwi_tokenizer).fold(question, [user("연차휴가는 며칠이야?")])
    assert folded.used_history
    assert folded.context == "연차휴가는 며칠이야?"
    assert folded.standalone.startswith("연차휴가는 며칠이야 ")


def test_self_contained_question_is_not_folded(kiwi_tokenizer):
    folded = ConversationFolder(kiwi_tokenizer).fold("육아휴직 급여는 회사가 주는 거야 고용센터가 주는 거야?",
                                                     [user("연차휴가는 며칠이야?"), bot("15일이에요.")])
    assert not folded.used_history
    assert folded.standalone == "육아휴직 급여는 회사가 주는 거야 고용센터가 주는 거야?"


def test_folding_keeps_only_the_latest_turns(kiwi_tokenizer):
    folded = ConversationFolder(kiwi_tokenizer, max_turns=1).fold("그럼 그건?", [user("첫 질문"), user("둘째 질문")])
    assert folded.context == "둘째 질문"


def user(text: str) -> Message:
    return Message(role=Role.USER, content=text)


def bot(text: str) -> Message:
    return Message(role=Role.ASSISTANT, content=text)


def test_a_follow_up_leans_on_the_reply_it_answers_too(kiwi_tokenizer):
    history = [user("구제명령을 회사가 안 따라."), bot("노동위원회가 이행강제금을 부과합니다.")]
    folded = ConversationFolder(kiwi_tokenizer).fold("그 돈은 최대 얼마까지야?", history)
    assert "이행강제금" in folded.context and "구제명령" in folded.context
    assert folded.text == "그 돈은 최대 얼마까지야?"


@pytest.mark.parametrize("question", [
    "입사할 때 결혼하면 퇴사한다는 서약서를 쓰라는데 이거 괜찮은 거야?",
    "직장 내 성희롱이 뭔지, 그리고 신고가 들어오면 회사는 뭘 해야 해?",
    "공무원 국외 여비 종류",
])
def test_a_standalone_question_after_an_unrelated_exchange_is_not_folded(kiwi_tokenizer, question):
    history = [user("부가세 신고 기한이 언제야?"), bot("25일까지 신고해야 해요.")]
    assert not ConversationFolder(kiwi_tokenizer).fold(question, history).used_history


@pytest.mark.parametrize("question", ["그 돈은 최대 얼마까지야?", "월세 보증금 내는 데 쓰는 것도 거기 포함돼?",
                                      "그리고 퇴직금은?"])
def test_a_pointer_at_the_start_of_a_question_leans_on_the_conversation(kiwi_tokenizer, question):
    history = [user("구제명령을 회사가 안 따라."), bot("이행강제금을 부과합니다.")]
    assert ConversationFolder(kiwi_tokenizer).fold(question, history).used_history


@pytest.mark.parametrize("question", ["쌍둥이를 낳으면 더 길어져?", "공휴일도 유급으로 쉬게 해줘야 해?"])
def test_a_question_naming_few_topic_nouns_borrows_the_conversation_subject(kiwi_tokenizer, question):
    history = [user("출산휴가는 며칠이야?"), bot("출산전후휴가는 90일입니다.")]
    assert ConversationFolder(kiwi_tokenizer, topic_nouns=2).fold(question, history).used_history
    assert not ConversationFolder(kiwi_tokenizer, topic_nouns=0).fold(question, history).used_history


def test_the_fold_threshold_is_the_fitted_one(kiwi_tokenizer):
    assert ConversationFolder(kiwi_tokenizer).topic_nouns == load_fold_fit()


@pytest.mark.parametrize("question", ["And if my boss says no?", "ok thanks. can my wife take some days too?",
                                      "Does it count for part-timers?"])
def test_an_english_follow_up_is_folded_by_the_glossarys_cues(kiwi_tokenizer, question):
    history = [user("How long is maternity leave?"), bot("근로기준법 제74조: 90일")]
    folded = ConversationFolder(kiwi_tokenizer, glossary=load_glossary()).fold(question, history)
    assert folded.previous_question == "How long is maternity leave?"


@pytest.mark.parametrize("question", ["Which train goes to Busan?", "Thanks!"])
def test_a_standalone_english_message_after_an_exchange_is_not_folded(kiwi_tokenizer, question):
    history = [user("How long is maternity leave?"), bot("근로기준법 제74조: 90일")]
    assert not ConversationFolder(kiwi_tokenizer, glossary=load_glossary()).fold(question, history).used_history


class TestIntentTable:
    def test_a_described_situation_brings_the_words_that_answer_it(self, analyzer):
        analyzed = analyzer.analyze("요즘 너무 지쳐서 좀 쉬고 싶어")
        assert analyzed.intents == ("rest",)
        assert {"휴가", "휴직"} <= set(analyzed.expansion)

    def test_the_askers_audience_chooses_the_words(self, analyzer):
        student = analyzer.analyze("대학생인데 학교 가기 싫어")
        assert student.audience == "student" and "휴학" in student.expansion and "연차" not in student.expansion

    def test_a_question_that_names_its_rule_matches_no_situation(self, analyzer):
        assert analyzer.analyze("연차는 며칠이야?").intents == ()

    def test_the_table_off_leaves_the_question_as_asked(self, kiwi_tokenizer):
        analyzed = QueryAnalyzer(kiwi_tokenizer, intents=[]).analyze("요즘 너무 지쳐서 좀 쉬고 싶어")
        assert analyzed.intents == () and "휴직" not in analyzed.expansion

    def test_every_entry_of_the_table_is_well_formed(self):
        intents = load_intents()
        assert len({i.name for i in intents}) == len(intents) >= 5
        assert all(i.triggers and i.keywords.get("default") for i in intents)


def test_a_malformed_intent_table_is_one_clear_error(tmp_path):
    table = tmp_path / "intents.yaml"
    table.write_text("intents:\n  - name: rest\n    triggers: [쉬고 싶]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"intents\.yaml: intent 1 needs name, triggers and keywords"):
        load_intents(table)
