"""AnswerabilityJudge, the refusal text, and the offline grader that decides with them."""

import pytest

from rag import messages
from rag.lang import framing_for
from rag.models import Chunk, Hit
from rag.retrieval.query import QueryAnalyzer
from rag.stages.answerability import AnswerabilityFit, AnswerabilityJudge
from rag.stages.grader import OfflineGrader
from rag.stages.refusal import refusal_message, silent_topics

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"
CAFE_QUESTION = "사내 카페는 저녁 몇 시에 문을 닫아?"


def hit(doc: str, article: str, ranks: dict[str, int], text: str = "본문") -> Hit:
    chunk = Chunk(chunk_id=f"{doc}:{article}", doc=doc, article=article, text=f"{article}\n{text}")
    return Hit(chunk=chunk, score=1.0, ranks=ranks)


@pytest.fixture(scope="module")
def judge(samples):
    return AnswerabilityJudge(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)


class TestAnswerabilityJudge:
    def test_a_question_the_regulations_answer_is_answerable(self, samples, judge):
        assessed = judge.assess(LEAVE_QUESTION, samples.retriever.search_sync(LEAVE_QUESTION, k=6))
        assert assessed.answerable
        assert "연차" in assessed.looked_for and "연차" not in assessed.missing

    def test_a_topic_the_regulations_never_mention_is_not_answerable(self, samples, judge):
        assessed = judge.assess(CAFE_QUESTION, samples.retriever.search_sync(CAFE_QUESTION, k=6))
        assert not assessed.answerable
        assert "카페" in assessed.missing

    def test_no_hits_or_no_content_words_are_not_answerable(self, samples, judge):
        assert not judge.assess(LEAVE_QUESTION, []).answerable
        assert not judge.assess("뭐 좀 알려줘", samples.retriever.search_sync("연차", k=3)).answerable

    def test_a_foreign_question_the_glossary_cannot_read_has_nothing_to_look_for(self, samples, judge):
        hits = samples.retriever.search_sync("연차", k=3)
        unread = judge.assess("Which bank is best for a foreigner here?", hits)
        assert (unread.outcome, unread.looked_for) == ("refused", ())
        read = judge.assess("How many days of annual leave do I get?", hits)
        assert "연차" in read.looked_for

    def test_a_compound_counts_once_and_its_parts_do_not_add_weight(self, judge):
        words = {c.word: c.parts for c in judge.concepts("근로기준법 위반 신고")}
        assert "근로기준법" in words and "근로" not in words and "근로" in words["근로기준법"]

    def test_a_parts_regulation_term_is_not_the_compound(self, samples):
        # "급여 → 임금" is right for 급여 and wrong for 실업급여: an article about 임금 covers 실업급여 only in part.
        # An entry for the whole compound (야근수당) still gives full credit, whatever its parts' entries say.
        analyzer = QueryAnalyzer(samples.tokenizer, synonyms={"급여": ["임금"], "야근": ["연장근로", "야간근로"],
                                                               "야근수당": ["연장근로"]})
        judge = AnswerabilityJudge(samples.corpus, samples.tokenizer, analyzer=analyzer)
        wages = [hit("취업규칙", "제30조", {"lexical": 1}, "임금은 매월 25일에 지급한다. 연장근로는 가산한다.")]
        assert judge.assess("급여", wages).coverage == 1.0
        assert judge.assess("실업급여", wages).coverage == pytest.approx(0.5)
        assert judge.assess("야근수당", wages).coverage == 1.0

    def test_a_greeting_before_the_question_is_not_its_topic(self, samples, judge):
        question = "안녕하세요, " + LEAVE_QUESTION
        assessed = judge.assess(question, samples.retriever.search_sync(question, k=6))
        assert assessed.answerable and "안녕" not in assessed.looked_for

    def test_filler_and_aspect_words_weigh_less_than_the_topic(self, judge):
        weights = {c.word: c.weight for c in judge.concepts("올해 출장비 최대 금액 좀 알려줘")}
        assert "올해" not in weights and "알리다" not in weights
        assert weights["최대"] < weights["출장비"]

    def test_agreement_needs_both_retrievers_near_the_top(self, judge):
        hits = [hit("취업규칙", "제20조", {"lexical": 1, "dense": 2}), hit("복무규정", "제3조", {"lexical": 2}),
                hit("취업규칙", "제21조", {"lexical": 3, "dense": 40})]
        assert judge.agreement(hits) == pytest.approx(1 / 3)

    def test_document_agreement_compares_each_retrievers_best_hit(self, judge):
        same = [hit("취업규칙", "제20조", {"lexical": 1, "dense": 3}), hit("취업규칙", "제21조", {"dense": 1})]
        split = [hit("취업규칙", "제20조", {"lexical": 1}), hit("여비규정", "제5조", {"dense": 1})]
        assert (judge.document_agreement(same), judge.document_agreement(split)) == (1.0, 0.0)

    def test_the_threshold_must_be_a_probability(self, samples):
        with pytest.raises(ValueError, match="threshold"):
            AnswerabilityJudge(samples.corpus, samples.tokenizer, threshold=1.5)


class TestThreeWayOutcome:
    # A fit that reads coverage of the core only: full coverage answers, none refuses.
    FIT = AnswerabilityFit(bias=0.0, weights={"coverage": 10.0}, center={"coverage": 0.5}, answer_threshold=0.8,
                           hedge_threshold=0.2)
    TRAVEL = "제10조\n출장비 정산은 복귀한 날부터 7일 이내에 한다."

    @pytest.fixture
    def fitted(self, samples):
        return AnswerabilityJudge(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer,
                                  fit=self.FIT)

    def test_the_score_decides_answered_hedged_or_refused(self, fitted):
        assert [fitted.decide(s) for s in (0.9, 0.8, 0.5, 0.2, 0.1)] == [
            "answered", "answered", "hedged", "hedged", "refused"]

    def test_an_article_holding_the_asked_thing_answers_and_an_unrelated_one_is_refused(self, fitted):
        question = "출장비 정산은 언제까지 해?"
        assert fitted.assess(question, [hit("여비규정", "제10조", {"lexical": 1}, self.TRAVEL)]).outcome == "answered"
        unrelated = hit("복무규정", "제3조", {"lexical": 1}, "직원은 품위를 유지한다.")
        assert fitted.assess(question, [unrelated]).outcome == "refused"

    def test_the_story_before_the_question_demands_no_coverage(self, fitted):
        told = "지난주에 제주도 워크숍을 다녀왔는데, 출장비 정산은 언제까지 해?"
        assessed = fitted.assess(told, [hit("여비규정", "제10조", {"lexical": 1}, self.TRAVEL)])
        assert assessed.outcome == "answered" and assessed.coverage == 1.0
        assert "제주도" not in assessed.missing and "워크숍" not in assessed.looked_for
        assert assessed.features["story_share"] > 0 and assessed.features["coverage_all"] < 1.0

    def test_without_similarity_the_lexical_blend_decides(self, samples):
        # The test index embeds with a hashing embedder: no similarity, so the blend that needs it would decide
        # from its bias alone (here: answer everything).
        leaning = AnswerabilityFit(bias=5.0, weights={"similarity": 50.0}, center={"similarity": 0.88},
                                   answer_threshold=0.9, hedge_threshold=0.5, without_similarity=self.FIT)
        judge = AnswerabilityJudge(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer,
                                   fit=leaning)
        unrelated = hit("복무규정", "제3조", {"lexical": 1}, "직원은 품위를 유지한다.")
        assert judge.assess("출장비 정산은 언제까지 해?", [unrelated]).outcome == "refused"

    def test_an_operators_answer_threshold_below_the_hedge_band_leaves_no_hedge(self, samples):
        judge = AnswerabilityJudge(samples.corpus, samples.tokenizer, fit=self.FIT, threshold=0.1)
        assert (judge.threshold, judge.hedge_threshold) == (0.1, 0.1)
        assert judge.decide(0.15) == "answered" and judge.decide(0.05) == "refused"


class TestRefusalMessage:
    def test_says_what_was_looked_for_and_names_the_closest_documents_without_quoting(self):
        hits = [hit("취업규칙", "제30조", {"lexical": 1}, text="복리후생 시설을 둔다."),
                hit("복무규정", "제2조", {"lexical": 2})]
        text = refusal_message(("카페", "열다", "사내"), hits, silent_on=("카페", "열다", "사내"))
        assert "'카페', '사내'" in text and "열다" not in text
        assert "「취업규칙」, 「복무규정」" in text
        assert "담당 부서" in text and "복리후생" not in text

    def test_names_only_what_the_regulations_are_silent_on(self):
        hits = [hit("고등교육법", "제61조", {"lexical": 1}, text="학교의 휴업을 명할 수 있다.")]
        text = refusal_message(("태풍", "닫다", "학교"), hits, silent_on=("태풍", "닫다"))
        assert "'태풍'에 대한 내용은 찾지 못했어요" in text and "'학교'" not in text

    def test_when_every_word_is_in_the_regulations_it_says_no_article_answers(self):
        hits = [hit("고등교육법", "제61조", {"lexical": 1}, text="학교의 휴업을 명할 수 있다.")]
        text = refusal_message(("학교", "휴업"), hits, silent_on=())
        assert text.startswith(messages.NOT_ANSWERED.format(looked_for="'학교', '휴업'"))

    def test_names_regulations_by_title_never_by_collection(self):
        chunks = [Chunk(chunk_id="a", doc="복지 안내", article="제1조", text="제1조", collection="총무"),
                  Chunk(chunk_id="b", doc="근로기준법(예시)", article="제1조", text="제1조", collection="law")]
        text = refusal_message(("카페",), [Hit(chunk=c, score=1.0) for c in chunks])
        assert "가장 가까운 「복지 안내」, 「근로기준법(예시)」까지 살펴봤지만" in text
        assert "'총무'" not in text and "'law'" not in text and "규정 모음" not in text

    def test_a_pasted_page_is_not_echoed_whole(self):
        text = refusal_message(("가" * 1999, "나" * 30, "다다"), [])
        assert "'" + "가" * 19 + "…'" in text
        assert len(text) < len(refusal_message(("다다",), [])) + 60

    def test_without_content_words_it_is_the_plain_refusal(self):
        assert refusal_message((), []) == messages.NOT_FOUND

    def test_a_foreign_refusal_names_only_the_askers_topics_the_regulations_are_silent_on(self):
        hits = [hit("근로기준법", "제60조", {"lexical": 1}, text="15일의 유급휴가를 주어야 한다.")]
        topics, words = ("funeral costs", "annual paid leave"), (("장례비",), ("연차", "유급휴가"))
        silent = silent_topics(topics, words, ("장례비",))
        text = refusal_message(topics, hits, silent_on=silent, language="en")
        assert silent == ["funeral costs"]
        assert text.startswith(framing_for("en").NOT_COVERED.format(looked_for="'funeral costs'"))
        # Nothing silent: every topic is named, as in the regulations but unanswered.
        assert refusal_message(topics, hits, silent_on=silent_topics(topics, words, ()), language="en").startswith(
            framing_for("en").NOT_ANSWERED.format(looked_for="'funeral costs', 'annual paid leave'"))


class TestOfflineGraderDecidesByAnswerability:
    async def test_the_threshold_setting_moves_the_decision(self, samples):
        hits = samples.retriever.search_sync(LEAVE_QUESTION, k=6)
        lenient = await OfflineGrader(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer,
                                      threshold=0.0).run(LEAVE_QUESTION, hits)
        strict = await OfflineGrader(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer,
                                     threshold=1.0).run(LEAVE_QUESTION, hits)
        assert (lenient.passed, strict.passed) == (True, False)
        assert "연차" in strict.looked_for


class TestFoldedQuestions:
    """A follow-up the conversation made standalone: the earlier question's words (its article covers them) do not
    make an unrelated question answerable, and they still fill in what a follow-up leaves out or points to."""

    LEAVE_REPLY = "취업규칙 제20조에 따르면 1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다."

    async def ask_after_leave(self, samples, question: str):
        from rag.models import Message, Role
        from rag.pipeline import collect

        history = (Message(role=Role.USER, content=LEAVE_QUESTION),
                   Message(role=Role.ASSISTANT, content=self.LEAVE_REPLY))
        understood = await samples.pipeline.stages.understander.run(question, history)
        assert understood.enhanced.used_history  # folded with the exchange on annual leave
        answer, _ = await collect(samples.pipeline, question, history=history)
        assert answer is not None
        return answer

    async def test_an_unrelated_question_after_an_exchange_is_refused_on_its_own_words(self, samples):
        answer = await self.ask_after_leave(samples, "카페는 몇 시에 닫아?")
        assert answer.outcome == "refused"
        assert "'카페'" in answer.text and "'연차'" not in answer.text

    @pytest.mark.parametrize("question", ["반일로 나눠 써도 돼?", "그건 반일로 나눠 써도 돼?"])
    async def test_a_follow_up_that_leaves_out_its_subject_is_still_answered(self, samples, question):
        answer = await self.ask_after_leave(samples, question)
        assert answer.outcome == "answered"
        assert answer.citations[0].article == "제20조"


class TestHeadingAndSimilarity:
    def test_an_article_titled_with_the_topic_covers_its_heading_one_that_mentions_it_does_not(self, judge):
        titled = Chunk(chunk_id="a", doc="취업규칙", article="제20조", title="연차휴가",
                       text="제20조(연차휴가)\n1년간 8할 이상 출근한 직원에게 15일을 준다.")
        mentioned = Chunk(chunk_id="b", doc="취업규칙", article="제40조", title="포상",
                          text="제40조(포상)\n연차휴가를 다 쓰지 않은 직원의 포상은 따로 정한다.")
        about = judge.assess("연차휴가 며칠이야?", [Hit(chunk=titled, score=1.0)])
        passing = judge.assess("연차휴가 며칠이야?", [Hit(chunk=mentioned, score=1.0)])
        assert about.heading == 1.0 and passing.heading == 0.0
        assert about.coverage == passing.coverage and about.score > passing.score

    def test_similarity_counts_only_for_the_model_the_weights_were_fitted_on(self, samples, judge):
        # The test index embeds with a hashing embedder: its cosines are on another scale, so they are ignored.
        hits = samples.retriever.search_sync(LEAVE_QUESTION, k=6)
        assert judge.assess(LEAVE_QUESTION, hits).similarity is None

    def test_a_question_closer_to_its_article_scores_higher_and_unknown_similarity_is_neutral(self, judge):
        fit = judge.fit
        center = fit.center.get("similarity", 0.0)
        signals = {"coverage": 0.5, "coverage_all": 0.5, "agreement": 0.5, "heading": 0.5, "heading_all": 0.5}
        base = fit.score(signals)
        assert fit.score({**signals, "similarity": center + 0.02}) > base > fit.score(
            {**signals, "similarity": center - 0.02})
        assert fit.score({**signals, "similarity": None}) == base == fit.score({**signals, "similarity": center})


def test_a_foreign_question_is_judged_by_the_foreign_blend_and_a_korean_one_by_the_korean_blend() -> None:
    from rag.stages.answerability import AnswerabilityFit, AnswerabilityJudge

    fit = AnswerabilityFit.load()
    assert fit.foreign is not None and fit.foreign.weights != fit.weights  # fitted on its own rows and thresholds
    judge = AnswerabilityJudge.__new__(AnswerabilityJudge)  # only the blend choice is exercised
    judge.fit = fit
    assert judge.blend({"similarity": 0.9, "foreign": 1.0}) is fit.foreign
    assert judge.blend({"similarity": 0.9, "foreign": 0.0}) is fit
    assert judge.blend({"similarity": None, "foreign": 1.0}) is fit.without_similarity
