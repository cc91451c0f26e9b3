"""The language detector: Korean questions stay Korean whatever English words they borrow."""

from __future__ import annotations

import pytest

from rag.lang import detect_language


@pytest.mark.parametrize("question", [
    "PC 반납은?",
    "IT팀 연락처 알려줘",
    "OT 수당 얼마야?",
    "재택 WFH 며칠 돼?",
    "Slack에서 HR 담당자한테 연차 신청하면 돼?",
    "회사 노트북 OS 업데이트 규정 있어?",
    "연차 15일",
    "",
    "🙂",
    "2024",
])
def test_korean_questions_with_english_words_stay_korean(question: str) -> None:
    assert detect_language(question) == "ko"


@pytest.mark.parametrize("question", [
    "How many days of annual leave do I get after working one year?",
    "Can my boss fire me without notice?",
    "What does 연차 mean?",
    "How long is 육아휴직 for fathers?",
    "Is there a cafe rule?",
])
def test_english_questions_are_english_even_naming_a_korean_term(question: str) -> None:
    assert detect_language(question) == "en"


@pytest.mark.parametrize("question", [
    "Tôi được nghỉ phép năm bao nhiêu ngày?",
    "Công ty nợ lương thì làm sao?",
    "Nghỉ thai sản được mấy tháng?",
    "toi lam mot nam thi duoc nghi phep bao nhieu ngay",
    # typed without diacritics, a third of the words common Vietnamese ones
    "cong ty toi chi co 3 nguoi thoi, luat co ap dung cho chung toi khong?",
    "toi muon hoi ve luat lao dong cho nguoi nuoc ngoai",
])
def test_vietnamese_questions_are_vietnamese_with_or_without_diacritics(question: str) -> None:
    assert detect_language(question) == "vi"


def test_a_french_loanword_does_not_make_english_vietnamese() -> None:
    assert detect_language("Can I bring my résumé to the interview?") == "en"
