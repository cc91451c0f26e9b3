"""Korean labels of the operator report (terminal, HTML file and `/admin`), in one place."""

from __future__ import annotations

TITLE = "regbot 이용 보고서"
PERIOD = "기간"
TURNS = "전체 질문"
LANGUAGES = "질문 언어"  # ko · en · vi counts (rag/lang)
ANSWERED = "답변"
REFUSAL_RATE = "규정에 없는 질문 비율"
REFUSAL_RATE_HINT = "규정으로 답하지 못한 질문 ÷ (답변 + 규정에 없음)"
FEEDBACK_UP = "도움이 됐어요 👍"
FEEDBACK_DOWN = "도움이 안 됐어요 👎"
LATENCY_P50 = "응답 시간 p50"
LATENCY_P95 = "응답 시간 p95"
LLM_CALLS = "답변당 LLM 호출"
LLM_TOKENS = "답변당 토큰"
CACHE_HIT_RATE = "캐시 적중률"
NOT_AVAILABLE = "–"

VOLUME_CHART = "일별 질문 수 (플랫폼별)"
OUTCOMES = "결과별 질문 수"
PLATFORMS = "플랫폼별 질문 수"
TOP_ARTICLES = "가장 많이 인용된 조문"
TOP_DOCS = "가장 많이 인용된 규정"
THEMES = "규정에 없는 질문의 주제 (규정이 다루지 않는 것)"
THEMES_NOTE = "질문 원문은 저장하지 않고, 답하지 못한 질문의 일반명사만 모아 묶었습니다."
UNKNOWN_WORDS = ("답하지 못한 질문에서 색인과 어휘(lexicon)에 모두 없는 말: {words}\n"
                 "조직의 용어라면 데이터 폴더의 lexicon/synonyms*.yaml 에 규정의 말과 함께 추가하세요.")
THEMES_NOTE_KEPT = "REGBOT_KEEP_QUESTIONS가 켜져 있어 질문 예시(앞부분)를 함께 보여 줍니다."
FEEDBACK_CHART = "사용자 평가"
DISLIKED = "👎 평가를 받은 답변과 인용 조문"
NO_DATA = "아직 기록이 없습니다."
COL_DAY = "날짜"
COL_TOTAL = "합계"
COL_DOC = "규정"
COL_ARTICLE = "조문"
COL_COUNT = "건수"
COL_THEME = "주제"
COL_EXAMPLES = "예시"
COL_UNKNOWN = "어휘에 없는 말"
COL_WHEN = "평가 시각"
COL_PLATFORM = "플랫폼"
COL_OUTCOME = "결과"
COL_CITED = "인용"
COL_QUESTION = "질문"
COL_COMMENT = "의견"
PURGED = "기록 {count}건을 삭제했습니다."
RECENT_CHANGES = "최근 개정"
RECENT_CHANGES_NOTE = "개정된 조문을 인용한 질문 수: 새 조문으로 답하기 전과 후 (기간 안)."
COL_EFFECTIVE = "시행일"
COL_ASKED_BEFORE = "개정 전 질문"
COL_ASKED_AFTER = "개정 후 질문"
PENDING = "{date} 시행 예정"

PLATFORM_NAMES = {"slack": "Slack", "teams": "Teams", "web": "웹 playground", "other": "기타"}
OUTCOME_NAMES = {
    "answered": "답변",
    "not_covered": "규정에 없음",
    "small_talk": "일상 대화",
    "rate_limited": "사용량 제한",
    "error": "오류",
    "invalid": "잘못된 입력",
    "busy": "대기열 초과",
    "timeout": "시간 초과",
    "abandoned": "중단됨",
}


def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


def outcome_name(outcome: str) -> str:
    return OUTCOME_NAMES.get(outcome, outcome)
