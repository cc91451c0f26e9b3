"""Rule codes (규정번호) and lookups that lean on the conversation, over the bundled samples, offline."""

import pytest

from rag.models import Message, Role, Route
from rag.pipeline import collect


def exchange(question: str, answer_text: str) -> tuple[Message, Message]:
    return Message(role=Role.USER, content=question), Message(role=Role.ASSISTANT, content=answer_text)


async def ask_after(components, first: str, follow_up: str):
    first_answer, _ = await collect(components.pipeline, first)
    return await collect(components.pipeline, follow_up, history=exchange(first, first_answer.text))


async def test_next_article_follow_up_is_looked_up_in_the_same_regulation(sample_components):
    answer, _ = await ask_after(sample_components, "취업규칙 제20조", "그럼 21조는?")
    assert answer.route == Route.LOOKUP
    assert answer.citations[0].label == "취업규칙 제21조"
    assert "lookup from the conversation: 취업규칙 21조는?" in answer.notes


async def test_fulltext_follow_up_shows_the_regulation_of_the_conversation(sample_components):
    answer, _ = await ask_after(sample_components, "여비규정 제6조의2", "전문 보여줘")
    assert answer.route == Route.LOOKUP
    assert answer.citations[0].doc == "여비 규정"
    assert "제1조" in answer.text


async def test_paragraph_follow_up_quotes_that_paragraph_of_the_last_article(sample_components):
    answer, _ = await ask_after(sample_components, "취업규칙 제20조", "3항은?")
    assert answer.citations[0].label == "취업규칙 제20조 제3항"
    assert "25일" in answer.text


async def test_follow_up_naming_another_regulation_is_not_redirected(sample_components):
    answer, _ = await ask_after(sample_components, "취업규칙 제20조", "복무 규정 제4조")
    assert answer.citations[0].label == "복무 규정 제4조"


async def test_bare_reference_without_conversation_is_not_a_lookup_in_some_regulation(sample_components):
    answer, _ = await collect(sample_components.pipeline, "21조는?")
    assert not any(n.startswith("lookup from the conversation") for n in answer.notes)


def test_focus_is_read_from_the_answer_header_when_the_user_named_no_regulation(sample_components):
    history = exchange("연차 며칠이야?", "**취업규칙 제20조(연차유급휴가)** [1]\n① 1년간 80퍼센트 이상 …")
    focus = sample_components.lookup.focus(history)
    assert (focus.doc, focus.article) == ("취업규칙", "제20조")


async def test_bare_rule_code_gives_the_regulation_overview(sample_components):
    answer, _ = await collect(sample_components.pipeline, "3-1-24")
    assert answer.route == Route.LOOKUP
    assert answer.text.startswith("**여비 규정** (규정 제3-1-24호)")
    assert "제5조 국내 출장 여비" in answer.text


@pytest.mark.parametrize("question", ["3-1-24 제5조", "규정 제3-1-24호 제5조", "제3-1-24호 5조 보여줘"])
async def test_rule_code_with_an_article_quotes_that_article(sample_components, question):
    answer, _ = await collect(sample_components.pipeline, question)
    assert answer.route == Route.LOOKUP
    assert answer.citations[0].label == "여비 규정 제5조"


async def test_unknown_rule_code_is_answered_as_not_found_not_small_talk(sample_components):
    answer, _ = await collect(sample_components.pipeline, "3-9-99")
    assert answer.route == Route.LOOKUP
    assert not answer.citations
    assert "3-9-99" in answer.text


async def test_article_follow_up_after_a_rule_code(sample_components):
    answer, _ = await ask_after(sample_components, "3-1-24", "그럼 제6조는?")
    assert answer.citations[0].label == "여비 규정 제6조"


async def test_a_name_two_regulations_share_offers_both_articles_as_follow_ups(sample_components):
    # "규정" is part of both 여비 규정 and 복무 규정, and each has a 제5조: the user chooses, nothing is searched.
    answer, _ = await collect(sample_components.pipeline, "규정 제5조")
    assert answer.route == Route.LOOKUP and not answer.citations
    assert set(answer.followups) == {"여비 규정 제5조", "복무 규정 제5조"}
    chosen, _ = await collect(sample_components.pipeline, answer.followups[0])
    assert chosen.citations[0].label == answer.followups[0]
