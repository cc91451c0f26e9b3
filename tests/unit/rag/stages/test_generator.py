"""LlmGenerator: streamed, cited answers; the extractive fallback; follow-ups hidden from the stream."""

import asyncio
import re

import pytest

from rag import messages
from rag.lang.asks import QuestionFacets, QuestionReader
from rag.llm import LlmRequestFailed
from rag.models import Chunk, Hit
from rag.stages.config import StageTuning
from rag.stages.contracts import GenerationInput
from rag.stages.generator import ExtractiveGenerator, FollowupSplitter, LlmGenerator

LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"


@pytest.fixture(scope="module")
def hits(samples):
    def find(query, label):
        return next(h for h in samples.retriever.search_sync(query, k=8) if h.chunk.label == label)
    return {"leave": find(LEAVE_QUESTION, "취업규칙 제20조"), "promote": find(LEAVE_QUESTION, "취업규칙 제21조"),
            "sick": find("병가는 며칠까지 쓸 수 있어?", "취업규칙 제23조"),
            "hotel": find("출장 숙박비 한도는 얼마야?", "여비 규정 제5조")}


@pytest.fixture
def make_generator(samples):
    def make(llm):
        return LlmGenerator(llm, fallback=ExtractiveGenerator(samples.corpus, samples.tokenizer),
                            tokenizer=samples.tokenizer)
    return make


_DRAFTS: dict[int, object] = {}


async def drain(generator, request):
    """The answer's visible pieces; the draft (always the last event, and the only draft) is kept for
    `draft_of`."""
    events = [event async for event in generator.run(request)]
    assert events and events[-1].kind == "draft" and all(e.draft is None for e in events[:-1])
    _DRAFTS[id(generator)] = events[-1].draft
    return [e.text for e in events if e.kind == "delta"]


def draft_of(generator):
    return _DRAFTS[id(generator)]


async def compound_leads(samples, parts: tuple[str, ...], evidence, *, tuning: StageTuning | None = None) -> list[str]:
    """The lead lines the offline generator writes for a compound question of `parts`, each with its evidence."""
    extra = {"tuning": tuning} if tuning is not None else {}
    generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer, **extra)
    await drain(generator, GenerationInput(question=" ".join(parts), sub_questions=parts, evidence=evidence))
    return draft_of(generator).text.split("\n\n", 1)[0].splitlines()


async def lead_for(samples, question: str, article: str, title: str, body: str,
                   *more: tuple[str, str, str], asked: str = "") -> str:
    """The first line the offline generator writes for `question` (as the user `asked` it, for a follow-up made
    standalone) over articles of our own making (article, title, body), ranked in the order given."""
    hits = tuple(Hit(chunk=Chunk(chunk_id=f"rule-{a}", doc="근무 규칙", article=a, title=t,
                                 text=f"근무 규칙 {a}({t})\n{b}", part=0, kind="article", collection="default",
                                 content_hash=f"rule-{a}"), score=1.0)
                 for a, t, b in ((article, title, body), *more))
    generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)
    await drain(generator, GenerationInput(question=question, asked=asked, evidence=(hits,)))
    return draft_of(generator).text.split("\n", 1)[0]


class TestFollowupSplitter:
    def test_hides_a_marker_split_across_deltas_and_what_follows(self):
        splitter = FollowupSplitter()
        shown = [splitter.feed(d) for d in ["15일이에요 [1].\n<후", "속질문>\n3년 이상이면 늘어나?\n", "- 반차도 돼?"]]
        shown.append(splitter.close())
        assert "".join(shown) == "15일이에요 [1].\n"
        assert splitter.followups == ("3년 이상이면 늘어나?", "반차도 돼?")

    def test_releases_an_angle_bracket_that_is_not_the_marker(self):
        splitter = FollowupSplitter()
        shown = [splitter.feed("개정 이력 <"), splitter.feed("개정 2025.1.1>")]
        assert "".join(shown) + splitter.close() == "개정 이력 <개정 2025.1.1>"
        assert splitter.followups == ()


class TestLlmGenerator:
    async def test_streams_a_cited_answer_and_lists_the_cited_paragraph(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[["1년간 80퍼센트 이상 출근하면 ", "15일의 연차유급휴가를 받아요 [1].",
                                     "\n<후속질문>\n3년 넘게 일하면 연차가 늘어나?\n반차로도 쓸 수 있어?"]])
        generator = make_generator(llm)
        request = GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"], hits["promote"]),))
        pieces = await drain(generator, request)
        draft = draft_of(generator)
        assert "후속질문" not in "".join(pieces)
        assert draft.text == "1년간 80퍼센트 이상 출근하면 15일의 연차유급휴가를 받아요 [1].\n"
        assert [c.label for c in draft.citations] == ["취업규칙 제20조 제1항"]
        assert draft.followups == ("3년 넘게 일하면 연차가 늘어나?", "반차로도 쓸 수 있어?")
        assert (draft.note, draft.by) == ("", "llm")
        sent = llm.requests[0]
        assert sent.tier == "strong"
        assert "[1] 취업규칙 제20조(연차유급휴가)\n① 1년간 80퍼센트" in sent.messages[0].content
        assert "[2] 취업규칙 제21조(연차휴가의 사용 촉진)" in sent.messages[0].content

    async def test_a_compound_question_lists_each_part_with_its_sources(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[["**병가**\n연간 30일 이내예요 [1].\n**숙박비**\n1박당 8만원이 한도예요 [2]."]])
        generator = make_generator(llm)
        request = GenerationInput(question="병가는 며칠이고 숙박비 한도는 얼마야?",
                                  sub_questions=("병가는 며칠이야?", "숙박비 한도는 얼마야?"),
                                  evidence=((hits["sick"],), (hits["hotel"],)))
        await drain(generator, request)
        draft = draft_of(generator)
        sent = llm.requests[0].messages[0].content
        assert "1. 병가는 며칠이야? — 관련 조문: [1]" in sent and "2. 숙박비 한도는 얼마야? — 관련 조문: [2]" in sent
        assert [c.label for c in draft.citations] == ["취업규칙 제23조 제1항", "여비 규정 제5조 제3항"]

    async def test_marker_lists_become_single_markers(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[["연차는 15일이고 사용 촉진 제도가 있어요 [1, 2]."]])
        generator = make_generator(llm)
        await drain(generator, GenerationInput(question=LEAVE_QUESTION,
                                               evidence=((hits["leave"], hits["promote"]),)))
        draft = draft_of(generator)
        assert "[1][2]" in draft.text
        assert [c.index for c in draft.citations] == [1, 2]

    async def test_an_open_breaker_quotes_the_regulations_with_a_note(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(available=False)
        generator = make_generator(llm)
        pieces = await drain(generator, GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"],),)))
        draft = draft_of(generator)
        assert llm.requests == []
        assert messages.EXTRACTIVE_SUPPORT in "".join(pieces)
        assert (draft.note, draft.by) == (messages.OFFLINE_NOTE, "extractive")
        assert draft.citations[0].label.startswith("취업규칙 제20조")

    async def test_a_failure_before_any_text_falls_back_to_quotes(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[[LlmRequestFailed("Anthropic answered 500", retryable=True)]])
        generator = make_generator(llm)
        pieces = await drain(generator, GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"],),)))
        assert messages.EXTRACTIVE_SUPPORT in "".join(pieces)
        assert draft_of(generator).note == messages.OFFLINE_NOTE

    async def test_a_failure_mid_stream_keeps_what_was_shown(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[["연차는 1년간 ", "80퍼센트 이상 출근하면 ",
                                     LlmRequestFailed("connection broke", retryable=True)]])
        generator = make_generator(llm)
        pieces = await drain(generator, GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"],),)))
        draft = draft_of(generator)
        assert "".join(pieces) == "연차는 1년간 80퍼센트 이상 출근하면 "
        assert draft.text.strip() == "연차는 1년간 80퍼센트 이상 출근하면"
        assert draft.note == messages.STREAM_INTERRUPTED

    async def test_revise_rewrites_once_without_the_unsupported_claim(self, make_generator, scripted_llm, hits):
        llm = scripted_llm(streams=[["연차는 20일이에요 [1]."], ["연차는 15일이에요 [1].\n<후속질문>\n무시"]])
        generator = make_generator(llm)
        request = GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"],),))
        await drain(generator, request)
        revised = await generator.revise(request, draft_of(generator), ("연차는 20일이에요 [1].",))
        assert revised.text == "연차는 15일이에요 [1].\n"
        assert "<주장>\n- 연차는 20일이에요 [1].\n</주장>" in llm.requests[1].messages[0].content
        assert llm.requests[1].stage == "revise"

    async def test_one_generator_answers_two_turns_at_once_each_with_its_own_sources(self, make_generator,
                                                                                      scripted_llm, hits):
        llm = scripted_llm(streams=[["연차는 15일이에요 ", "[1]."], ["숙박비 한도는 ", "정해져 있어요 [1]."]])
        generator = make_generator(llm)

        async def answer(question, hit):
            events = [e async for e in generator.run(GenerationInput(question=question, evidence=((hit,),)))]
            return events[-1].draft

        leave, hotel = await asyncio.gather(answer(LEAVE_QUESTION, hits["leave"]),
                                            answer("숙박비 한도는?", hits["hotel"]))
        assert leave.citations[0].label.startswith("취업규칙 제20조") and "15일" in leave.text
        assert hotel.citations[0].label.startswith("여비 규정 제5조") and "숙박비" in hotel.text

    async def test_quotes_are_never_revised(self, samples, hits):
        generator = ExtractiveGenerator(samples.corpus, samples.tokenizer)
        request = GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"],),))
        await drain(generator, request)
        assert await generator.revise(request, draft_of(generator), ("x",)) is None


class TestExtractiveGenerator:
    """Answer first, offline: the sentence that answers, then at most three quotes, unrelated articles left out."""

    async def test_opens_with_the_sentence_that_carries_the_figure_asked_for(self, samples, hits):
        generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)
        request = GenerationInput(question=LEAVE_QUESTION, evidence=((hits["promote"], hits["leave"]),))
        text = "".join(await drain(generator, request))
        lead = text.split("\n", 1)[0]
        first = re.search(r"^(.*?) \[(\d)\]", lead)  # the first sentence and its marker
        assert "15일" in first.group(1)
        assert draft_of(generator).citations[int(first.group(2)) - 1].label == "취업규칙 제20조 제1항"
        assert text.index(messages.EXTRACTIVE_SUPPORT) > len(lead)

    async def test_quotes_at_most_three_and_leaves_out_articles_that_share_nothing(self, samples, hits):
        generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)
        request = GenerationInput(question=LEAVE_QUESTION,
                                  evidence=((hits["leave"], hits["promote"], hits["hotel"]),))
        await drain(generator, request)
        draft = draft_of(generator)
        quotes = [line for line in draft.text.splitlines() if line.startswith("- **")]
        assert 1 <= len(quotes) <= 3
        assert not any(c.label.startswith("여비 규정") for c in draft.citations)

    async def test_a_compound_question_leads_with_an_answer_for_each_part(self, samples, hits):
        leads = await compound_leads(samples, ("병가는 며칠이야?", "숙박비 한도는 얼마야?"),
                                     ((hits["sick"],), (hits["hotel"],)))
        assert len(leads) == 2 and "[1]" in leads[0] and "[2]" in leads[1]

    async def test_a_compound_question_keeps_its_lead_to_one_sentence_a_part(self, samples, hits):
        # With two articles a part, a single question could take a second lead sentence; each part takes one, so
        # the reader meets both parts' answers first.
        leads = await compound_leads(samples, ("연차는 며칠이야?", "숙박비 한도는 얼마야?"),
                                     ((hits["leave"], hits["promote"]), (hits["hotel"], hits["sick"])),
                                     tuning=StageTuning(second_lead_share=0.0))
        assert [re.findall(r"\[\d+\]", line) for line in leads] == [["[1]"], ["[2]"]]

    async def test_two_parts_over_the_same_article_never_lead_with_the_same_sentence(self, samples, hits):
        # Both parts' best sentence was 제20조 ①, and the answer opened with it twice; the second takes its next best.
        leads = await compound_leads(samples, ("연차는 며칠이야?", "연차 일수는 어떻게 늘어나?"),
                                     ((hits["leave"],), (hits["leave"],)))
        assert len(leads) == 2 and leads[0].startswith("1년간 80퍼센트") and "[1]" in leads[0]
        assert "[2]" in leads[1] and "연차유급휴가를 준다. [1]" not in leads[1]

    @pytest.mark.parametrize(("question", "body", "lead_starts", "lead_holds"), [
        # The limit asked for is the proviso of a sentence that announces a list: the proviso leads, on its own.
        ("탄력 근무하면 한 주에 최대 몇 시간까지 일해?",
         "① 회사는 근로자대표와 서면으로 합의하면 다음 각 호의 사항을 정하여 3개월을 넘지 아니하는 단위기간을 평균하여 "
         "한 주의 근무시간이 제8조제1항의 근무시간을 넘지 아니하는 범위에서 특정한 주에 제8조제1항의 근무시간을, "
         "특정한 날에 제8조제2항의 근무시간을 넘어 근무하게 하는 탄력 근무를 시행할 수 있다. 다만, 한 주의 근무시간은 "
         "50시간을 초과할 수 없다.\n1. 대상 직원의 범위\n2. 단위기간과 그 기간의 근무일\n3. 단위기간의 주별 근무시간\n"
         "② 회사는 각 주의 근무일이 시작되기 1주 전까지 직원에게 그 주의 근무시간을 알려야 한다.",
         "한 주의 근무시간은", "50시간"),
        # A frequency is a figure too: "몇 년에 한 번" is answered by "매년".
        ("안전 점검은 몇 년에 한 번씩 해?",
         "① 회사는 안전 점검의 결과를 직원에게 알리고 점검 기록을 보관하여야 한다.\n"
         "② 회사는 안전 점검을 매년 실시한다.",
         "회사는 안전 점검을 매년", "매년"),
        # A full stop inside brackets does not end the sentence that carries the figure.
        ("시정명령을 안 따르면 과태료는 최대 얼마야?",
         "① 위원회는 시정명령(시정명령을 담은 재결정을 포함한다. 이하 같다)을 따르지 아니한 회사에 5백만원 이하의 "
         "과태료를 부과한다.\n② 위원회는 시정명령이 이행될 때까지 매년 두 번의 범위에서 과태료를 반복하여 "
         "부과할 수 있다.",
         "위원회는 시정명령(", "5백만원"),
        # "사유" asks for what a list holds: the sentence that announces it, with its items, answers; the provision
        # that mentions the same words in passing does not.
        ("특별휴가 사유",
         "① 회사는 다음 각 호의 어느 하나에 해당하는 직원에게 특별휴가를 준다.\n1. 본인이 결혼하는 경우\n"
         "2. 배우자가 출산한 경우\n② 같은 사유로 특별휴가를 다시 신청하는 직원은 특별휴가 신청서에 그 사유를 적어 "
         "제출하여야 한다.",
         "회사는 다음 각 호의 어느 하나에 해당하는 직원에게 특별휴가를 준다. 1.", "본인이 결혼"),
        # "다." opening a line labels the third 목 of a sub-list, not the end of a sentence: the item after it still
        # reads with the sentence that announces the list.
        ("파산선고 받으면 교육비를 미리 받을 수 있어?",
         "① 회사가 교육비를 미리 지급하는 사유는 다음 각 호와 같다.\n"
         "1. 직원이 6개월 이상 요양이 필요한 다음 각 목의 사람을 부양하는 경우\n"
         "가. 직원 본인\n나. 직원의 배우자\n다. 직원 또는 그 배우자의 부양가족\n"
         "2. 직원이 신청일 전 5년 이내에 파산선고를 받은 경우",
         "회사가 교육비를 미리 지급하는 사유는 다음 각 호와 같다.", "2. 직원이 신청일 전 5년 이내에 파산선고"),
    ])
    async def test_the_lead_is_the_whole_provision_that_states_what_is_asked(self, samples, question, body,
                                                                            lead_starts, lead_holds):
        lead = await lead_for(samples, question, "제9조", "예시", body)
        assert lead.startswith(lead_starts) and lead_holds in lead.split("[1]")[0]

    @pytest.mark.parametrize(("question", "keeps_proviso"), [
        ("유급휴가는 1년에 며칠 줘?", False),  # the exception is not what was asked: the quote below has it
        ("수습 중에도 유급휴가가 있어?", True),  # it is
    ])
    async def test_the_lead_keeps_a_proviso_only_when_it_bears_on_the_question(self, samples, question,
                                                                               keeps_proviso):
        lead = await lead_for(samples, question, "제12조", "유급휴가",
                              "① 회사는 1년간 근무한 직원에게 15일의 유급휴가를 주어야 한다. 다만, 수습 중인 사람은 "
                              "제외한다.\n② 휴가는 직원이 청구한 시기에 준다.")
        assert ("수습" in lead) is keeps_proviso
        assert "15일" in lead or keeps_proviso

    async def test_a_question_about_a_sanction_leads_with_the_sanction_for_its_rule(self, samples):
        # The rule the sanction cites shares more of the question's words; the sanction is what was asked.
        lead = await lead_for(samples, "육아휴직 썼다고 불이익 주면 회사는 어떤 처벌 받아?", "제30조", "벌칙",
                              "① 제5조를 위반하여 임금을 지급하지 아니한 자는 3년 이하의 징역에 처한다.\n"
                              "② 다음 각 호의 어느 하나에 해당하는 자는 2년 이하의 징역 또는 2천만원 이하의 벌금에 "
                              "처한다.\n1. 제12조제2항을 위반하여 육아휴직을 이유로 불리한 처우를 한 자\n"
                              "2. 제14조를 위반하여 서류를 보존하지 아니한 자",
                              ("제12조", "육아휴직", "① 회사는 직원이 청구하면 육아휴직을 주어야 한다.\n② 회사는 "
                                                  "육아휴직을 썼다는 이유로 직원에게 불이익이나 불리한 처우를 주어서는 "
                                                  "아니 된다."))
        assert lead.startswith("다음 각 호의 어느 하나에 해당하는 자는 2년 이하의 징역")
        assert "1. 제12조제2항을 위반하여 육아휴직" in lead

    @pytest.mark.parametrize(("asked", "answer"), [
        ("", "100만원"),  # as one question, the earlier part weighs as much as the new one
        ("그건 신청 기한은?", "7일"),  # a follow-up's own words come first
    ])
    async def test_a_follow_ups_lead_answers_what_it_asks_not_the_earlier_question(self, samples, asked, answer):
        lead = await lead_for(samples, "교육비 지원 금액은 얼마야 그건 신청 기한은?", "제8조", "교육비",
                              "① 교육비 지원 금액은 1인당 연 100만원으로 한다.\n"
                              "② 신청 기한은 수강 시작 7일 전까지로 한다.", asked=asked)
        assert answer in lead.split("[1]")[0]

    async def test_the_lead_reads_what_is_asked_from_the_facets_the_request_carries(self, samples):
        # The understanding read the question once; the lead takes its reading, not a second one of its own.
        body = "① 유급휴가는 직원이 신청한 날에 준다.\n② 1년간 80퍼센트 이상 근무한 직원에게는 15일의 유급휴가를 준다."
        hits = (Hit(chunk=Chunk(chunk_id="rule-20", doc="근무 규칙", article="제20조", title="유급휴가",
                                text=f"근무 규칙 제20조(유급휴가)\n{body}", part=0, kind="article",
                                collection="default", content_hash="rule-20"), score=1.0),)
        generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)
        reader = QuestionReader()
        for facets, lead in ((reader.read("유급휴가 며칠 받아?"), "15일"), (QuestionFacets(), "신청한 날")):
            await drain(generator, GenerationInput(question="유급휴가는 언제 줘?", evidence=(hits,), facets=facets))
            assert lead in draft_of(generator).text.split("[1]")[0]

    @pytest.mark.parametrize(("question", "answer"), [
        ("입사하고 1년 지나면 유급휴가 며칠이야?", "15일"),
        ("입사한 지 아직 1년 안 됐는데 유급휴가 있어?", "1일"),
    ])
    async def test_the_lead_matches_the_condition_the_question_sets(self, samples, question, answer):
        # "1년 미만" contradicts "1년 지나면" and answers "아직 1년 안 됐는데", whatever words they share.
        lead = await lead_for(samples, question, "제20조", "유급휴가",
                              "① 1년간 80퍼센트 이상 근무한 직원에게는 15일의 유급휴가를 준다.\n"
                              "② 입사 후 1년 미만인 직원에게는 1개월 개근 시 1일의 유급휴가를 준다.")
        assert f"{answer}의 유급휴가" in lead.split("[1]")[0]

    @pytest.mark.parametrize(("law", "second"), [
        ("① 사용자는 입사 후 1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 주어야 한다.", False),
        ("① 사용자는 입사 후 1년간 80퍼센트 이상 출근한 근로자에게 16일의 유급휴가를 주어야 한다.", True),
        ("① 사용자는 입사한 근로자에게 유급휴가를 청구한 시기에 주어야 한다.", True),
        ("① 사용자는 근로자에게 유급휴가를 청구한 시기에 주어야 한다.", False),
    ])
    async def test_a_second_lead_sentence_from_another_regulation_adds_what_is_asked_and_no_other_figure(
            self, samples, law, second):
        # A company rule's 16일 and the law's 15일 side by side are two answers to "며칠"; the law may follow when
        # it adds a word of the question (입사) and agrees, or states no figure in the unit asked.
        def hit(doc, article, body):
            return Hit(chunk=Chunk(chunk_id=f"{doc}-{article}", doc=doc, article=article, title="유급휴가",
                                   text=f"{doc} {article}(유급휴가)\n{body}", part=0, kind="article",
                                   collection="default", content_hash=f"{doc}-{article}"), score=1.0)
        hits = (hit("근무 규칙", "제20조", "① 1년간 80퍼센트 이상 출근한 직원에게는 16일의 유급휴가를 준다."),
                hit("근로 법", "제60조", law))
        generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer,
                                        tuning=StageTuning(second_lead_share=0.0))
        await drain(generator, GenerationInput(question="입사 1년 지나면 유급휴가 며칠 받아?", evidence=(hits,)))
        lead = draft_of(generator).text.split("\n", 1)[0]
        assert lead.startswith("1년간 80퍼센트 이상 출근한 직원에게는 16일의 유급휴가를 준다. [1]")
        assert ("[2]" in lead) is second and "15일" not in lead


def test_an_articles_quoted_paragraphs_are_listed_in_their_own_order():
    from rag.stages.generator.extractive import in_article_order

    work = Hit(chunk=Chunk(chunk_id="w", doc="취업규칙", article="제12조", text="…"), score=1.0)
    travel = Hit(chunk=Chunk(chunk_id="t", doc="여비 규정", article="제5조", text="…"), score=0.5)
    ranked = [(0.9, work, "②", "b"), (0.8, travel, "③", "c"), (0.7, work, "①", "a"), (0.6, travel, "①", "d")]
    assert [(q[1].chunk.chunk_id, q[2]) for q in in_article_order(ranked)] == [
        ("w", "①"), ("w", "②"), ("t", "①"), ("t", "③")]


class TestCitedParagraph:
    """The 항 a sources list names under an LLM sentence is the one the sentence draws on, or none."""

    ARTICLE = [("①", "한 해를 채워 근무하고 출근율이 팔 할을 넘는 직원에게는 15일의 유급 연차를 준다."),
               ("②", "근무가 한 해에 못 미치는 직원에게는 한 달 개근마다 1일의 유급 연차를 준다."),
               ("③", "연차는 직원이 청구한 시기에 준다.")]

    def test_the_figure_decides_between_paragraphs_sharing_their_words(self, kiwi_tokenizer):
        from rag.stages.generator.llm import cited_paragraph

        found = cited_paragraph("한 해를 근무하면 유급 연차 15일을 받아요", self.ARTICLE, kiwi_tokenizer, lambda t: 1.0)
        assert found == 0

    def test_a_sentence_drawing_on_two_paragraphs_cites_the_article_alone(self, kiwi_tokenizer):
        from rag.stages.generator.llm import cited_paragraph

        assert cited_paragraph("직원은 유급 연차를 받아요", self.ARTICLE, kiwi_tokenizer, lambda t: 1.0) is None


async def test_the_recorded_lead_candidates_replay_the_lead_the_generator_chose(samples, hits):
    # benchmarks/lead_fit.py records the candidates through the observer and replays the choice with other values.
    from rag.stages.generator.extractive import compose
    from rag.stages.generator.lead import choose_lead, lead_candidates

    generator = ExtractiveGenerator(samples.corpus, samples.tokenizer, analyzer=samples.retriever.analyzer)
    seen = []
    generator.observer = lambda gen, request, parts, studied: seen.append((request, parts, studied))
    await drain(generator, GenerationInput(question=LEAVE_QUESTION, evidence=((hits["leave"], hits["promote"]),)))
    request, parts, studied = seen[0]
    tuning = generator.tuning
    answered = [(q, ranked, [(c.shown, c.hit, c.marker, c.text) for c in choose_lead(
        lead_candidates(samples.tokenizer, terms, ranked, facets, max_chars=tuning.max_lead_chars,
                        depth=tuning.figure_lead_depth), terms, tuning, tuning.lead_sentences, facets)])
                for q, terms, ranked, facets in studied]
    assert compose(request, parts, answered, tuning).text == draft_of(generator).text
