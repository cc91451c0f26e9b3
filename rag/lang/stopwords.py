"""Korean words that name no topic: the tokenizer's stop stems and stop nouns, the generic nouns a refusal theme is
named by only when nothing more specific is there, and the article titles every statute has.

Changing STOP_STEMS or STOP_NOUNS changes the tokens of indexed text: bump `TOKENIZER_VERSION` with it.
"""

from __future__ import annotations

# Light verbs and fillers that carry no topic: 하다/되다/있다/없다/어떻다/같다 …
STOP_STEMS = frozenset({
    "하", "되", "있", "없", "어떻", "같", "그렇", "이렇", "저렇", "않", "주", "받", "알", "보", "싶",
    "모르", "지나", "알려주", "말하", "궁금하", "가능하", "괜찮", "맞", "아니", "그러", "이러", "저러", "나오",
    "생기", "들", "쓰", "해주", "드리", "여쭈", "묻", "듣", "가", "오", "오르", "말", "대",
})
# Question words and fillers: they say what is asked, not what it is about.
STOP_NOUNS = frozenset({
    "것", "수", "등", "때", "경우", "이", "그", "저", "뭐", "무엇", "어디", "언제", "누구", "얼마",
    "좀", "며칠", "몇", "얼마나", "정도", "거", "건", "게", "혹시", "진짜", "정말", "부분", "관련", "내용",
    "질문", "문의", "답변", "우리", "저희", "제", "나", "너", "당신", "요즘", "이번", "지금", "그냥", "원래",
    "어떻게", "왜", "무슨", "어느", "뭔가", "사람", "쪽", "데", "중", "번", "개", "가지", "대해", "대한",
})
# Nouns that say what kind of thing is asked (a time, a way, a rule), not what it is about: a theme is named by
# one of these only when a question has nothing more specific (`bot.themes`).
GENERIC_NOUNS = frozenset({
    "시간", "방법", "절차", "기준", "기간", "대상", "신청", "가능", "여부", "규정", "규칙", "회사", "직원", "사용",
    "이용", "운영", "안내", "문제", "상황", "필요", "확인", "처리", "요청", "변경", "경우", "내부", "사내", "관리",
    "오늘", "내일", "어제", "올해", "작년", "내년", "이번", "다음",
})
# Article titles that make poor examples: every statute has them and they say nothing about its subject.
GENERIC_TITLES = frozenset({"목적", "정의", "적용 범위", "적용범위", "시행일", "다른 법률과의 관계", "벌칙", "과태료",
                            "권한의 위임"})
