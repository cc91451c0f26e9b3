from retrieval_samples import make_chunk

from rag.retrieval.dense import passage_text


def test_passage_is_the_header_and_the_start_of_the_body():
    chunk = make_chunk("근로기준법", "제60조", "연차 유급휴가", "가" * 500)
    text = passage_text(chunk, 200)
    assert text.startswith("근로기준법 제60조(연차 유급휴가)\n")
    assert len(text.split("\n", 1)[1]) == 200


def test_passage_policy_none_embeds_the_whole_chunk_and_zero_the_header():
    chunk = make_chunk("규정", "제1조", "목적", "짧은 본문")
    assert passage_text(chunk, None) == chunk.text
    assert passage_text(chunk, 0) == "규정 제1조(목적)"
