"""The dense model reads a bounded window of a query: a pasted page is embedded from its start and its end, so a
1,999-character question costs about what a long sentence does."""

from rag.retrieval.embedder import QUERY_CHARS, query_window


def test_a_question_of_several_sentences_is_read_whole():
    question = "출장 가서 쓴 숙박비는 얼마까지 돌려받을 수 있어? 영수증이 없으면 어떻게 해야 해? " * 3
    assert query_window(question) == question


def test_a_pasted_page_is_read_from_its_start_and_its_end():
    page = "가" * 1000 + "이 경우 연차는 며칠이야?"
    window = query_window(page)
    assert len(window) <= QUERY_CHARS + 1
    assert window.startswith("가가가") and window.endswith("이 경우 연차는 며칠이야?")
