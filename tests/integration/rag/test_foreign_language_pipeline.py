"""English and Vietnamese questions through the real pipeline over the sample regulations (real Kiwi and Chroma,
offline stages; the LLM path with the Messages API mocked at the HTTP layer)."""

from __future__ import annotations

from rag import messages
from rag.lang import framing_for
from rag.pipeline import collect
from tests.integration.rag.test_pipeline_llm import (  # noqa: F401  (make_pipeline and sleeps are fixtures)
    claude_api,
    make_pipeline,
    passes,
    sleeps,
    stream,
    understood,
)

LEAVE_QUOTE = "「1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.」"


async def test_an_english_question_is_answered_in_english_quoting_the_korean_article(sample_components):
    answer, _ = await collect(sample_components.pipeline,
                              "I have been here a full year now. How many paid annual leave days can I take?")

    lines = answer.text.splitlines()
    assert lines[0].startswith("Here is what the Korean regulations say about annual paid leave.")
    assert lines[1] == f"Under 취업규칙 제20조 제1항: {LEAVE_QUOTE} [1]"
    assert answer.citations[0].label == "취업규칙 제20조 제1항"
    assert framing_for("en").EXTRACTIVE_SUPPORT in answer.text and messages.EXTRACTIVE_SUPPORT not in answer.text


async def test_a_vietnamese_question_is_answered_in_vietnamese_quoting_the_korean_article(sample_components):
    answer, _ = await collect(sample_components.pipeline, "Làm việc hơn một năm thì tôi có mấy ngày phép năm?")

    lines = answer.text.splitlines()
    assert lines[0].startswith("Đây là nội dung quy định của Hàn Quốc về nghỉ phép năm.")
    # The article quoted in Korean as written. Which paragraph leads depends on the glossary reading "hơn một năm"
    # (1년 이상): that entry was chosen from foreign-dev's misses and read nothing elsewhere, so it went
    # (benchmarks/glossary_fit.py), and the lead may now open with 제2항.
    assert lines[1].startswith("Theo 취업규칙 제20조 제") and "「" in lines[1] and lines[1].endswith("」 [1]")


async def test_an_english_question_the_regulations_do_not_cover_is_refused_in_english(sample_components):
    answer, _ = await collect(sample_components.pipeline, "Which parking spots are reserved for the executives?")

    assert not answer.grounded and not answer.citations
    assert answer.text.startswith("I could not find") or answer.text.startswith("The registered regulations")


async def test_a_korean_question_with_english_words_keeps_the_korean_answer(sample_components):
    answer, _ = await collect(sample_components.pipeline, "PC로 연차 신청하려면 며칠 전까지 해야 돼?")

    assert "Here is what" not in answer.text
    assert messages.EXTRACTIVE_SUPPORT in answer.text and "3일 전까지" in answer.text


async def test_with_an_llm_the_answer_is_asked_for_in_the_askers_language_beside_the_korean_quote(
        make_pipeline):  # noqa: F811 (the imported fixture)
    question = "How many days of paid annual leave do I get after one year?"
    reply = "You get 15 days: 「1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.」 [1]."
    claude = claude_api(understand=[understood(question)], grade=[passes("취업규칙 제20조")],
                        answer=[stream(reply, followups=False)])

    answer, _ = await collect(make_pipeline(claude), question)

    assert framing_for("en").LLM_LANGUAGE_RULE in claude.user_text("answer")
    assert question in claude.user_text("grade")  # the LLM grades the question as asked; its offline prior, the
    assert "how" not in claude.user_text("grade").split("사전 판단")[1]  # Korean core, names no English word
    assert answer.text.startswith("You get 15 days")
    assert answer.citations[0].label.startswith("취업규칙 제20조")


async def test_status_lines_follow_the_askers_language(sample_components):
    _, events = await collect(sample_components.pipeline, "Bao nhiêu ngày phép năm sau một năm làm việc?")

    statuses = [e.text for e in events if e.kind == "status"]
    assert statuses[:2] == ["Đang đọc câu hỏi của bạn…", "Đang tìm trong các quy định…"]


async def test_an_english_refusal_names_the_askers_own_words_not_the_statutes_korean(sample_components):
    answer, _ = await collect(sample_components.pipeline,
                              "How much is the funeral allowance when a family member of a worker dies?")

    assert not answer.grounded and not answer.citations
    first = answer.text.split(". ")[0]
    # It once named '장례비', '근로자': the words the judge read, which the asker never wrote.
    assert "'funeral'" in first and not any("\uac00" <= c <= "\ud7a3" for c in first)
