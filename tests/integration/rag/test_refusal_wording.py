"""What a refusal shows a user over the bundled samples: regulations by their titles (never a collection's storage
name), the user's words capped, and article buttons only when they share the question's topic."""

from rag.models import Chunk
from rag.pipeline import collect
from rag.stages.refusal import related_chunks


async def test_an_unrelated_question_gets_titles_and_no_unrelated_buttons(sample_components):
    answer, _ = await collect(sample_components.pipeline, "사내 카페 운영 시간은 어떻게 돼?")
    assert "「" in answer.text and "'default'" not in answer.text and "규정 모음" not in answer.text
    assert answer.followups == ()


async def test_a_pasted_page_is_answered_quickly_and_echoed_capped(sample_components):
    answer, _ = await collect(sample_components.pipeline, "abcdefghij" * 199)
    assert "abcdefghij" * 3 not in answer.text
    assert len(answer.text) < 400


def test_a_button_needs_half_of_the_questions_nouns():
    cafe = Chunk(chunk_id="a", doc="취업규칙", article="제10조", title="근로시간", text="1일 8시간으로 한다.")
    travel = Chunk(chunk_id="b", doc="여비 규정", article="제5조", title="국내 출장 여비", text="숙박비는 실비로 한다.")
    assert related_chunks([cafe, travel], ("사내", "카페", "운영", "시간")) == []
    assert related_chunks([cafe, travel], ("출장", "숙박비", "카페")) == [travel]
    assert related_chunks([cafe, travel], ()) == [cafe, travel]
