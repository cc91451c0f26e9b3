"""The web playground's own labels (buttons, headings, hints); what a user reads about an answer is in rag/messages.py.

The page gets these as JSON (`page.page_labels`), so the static HTML and script hold no Korean text of their own.
The labels around an answer come in the asker's language too (`ANSWER_LABELS`, by the language the answer carries,
`answer.language` in the `done` event; until then the `X-Regbot-Language` header's reading of the question), so an
English question, and a Korean reference tapped under an English answer, get English buttons under the answer.
"""

from rag.lang import LANGUAGES, label_set

PAGE_TITLE = "regbot 규정 도우미 체험하기"
HEADING = "regbot 규정 도우미"
BADGE = "체험판"
INTRO = "회사 규정에 대해 편하게 물어보세요. 답변마다 근거 조문이 함께 나오고, 조문을 누르면 전문을 볼 수 있어요."
READ_ONLY_NOTE = "읽기 전용 체험 화면이에요. 규정 등록과 변경은 관리자가 서버에서 해요."
EXAMPLES_CAPTION = "이렇게 물어보세요"
# Example questions drawn from the index (adapters/web/page.py `example_questions`); the fixed ones below are the
# fallback when nothing is indexed yet.
EXAMPLE_LOOKUP = "{doc} {article} 보여줘"
EXAMPLE_ABOUT = "{title}에 대해 알려줘"
EXAMPLE_QUESTIONS = (
    "입사 1년 지나면 연차 며칠 받아?",
    "출장 다녀오면 여비 정산은 언제까지 해?",
    "취업규칙 제20조 보여줘",
)

CONVERSATION_LABEL = "대화 내용"
QUESTION_LABEL = "질문"
QUESTION_PLACEHOLDER = "궁금한 규정을 물어보세요"
QUESTION_HINT = "Enter로 보내고, Shift+Enter로 줄을 바꿔요."
SEND = "보내기"
NEW_CONVERSATION = "새 대화"
YOU = "나"
BOT = "regbot"
THINKING = "답변을 준비하고 있어요…"
ANSWER_DONE = "답변이 끝났어요."
ANSWER_META = "답변 시간 {seconds}초 · AI 호출 {llm_calls}회"

SOURCES_CAPTION = "출처"
SOURCE_BUTTON = "출처 {index}: {label} 조문 보기"
FOLLOWUP_CAPTION = "이어서 물어보기"
FEEDBACK_QUESTION = "답변이 도움이 됐나요?"
FEEDBACK_UP = "👍 도움이 됐어요"
FEEDBACK_DOWN = "👎 아쉬워요"

ARTICLE_PANEL = "조문 보기"
ARTICLE_LOADING = "조문을 불러오는 중이에요…"
ARTICLE_QUOTE_ONLY = "전문을 불러오지 못해 답변에 인용된 부분만 보여 드려요."
ARTICLE_CITED = "답변에 인용된 항"
OPEN_SOURCE = "원문 문서 열기"
CLOSE = "닫기"
ACCESS_PROMPT = "이 체험판은 접근 코드가 필요해요. 안내받은 코드를 입력해 주세요."
ACCESS_WRONG = "접근 코드가 맞지 않아요. 다시 확인해 주세요."

_AROUND_AN_ANSWER = ("THINKING", "ANSWER_DONE", "ANSWER_META", "SOURCES_CAPTION", "SOURCE_BUTTON", "FOLLOWUP_CAPTION",
                     "FEEDBACK_QUESTION", "FEEDBACK_UP", "FEEDBACK_DOWN")
_answer_labels_for = label_set(
    {name: globals()[name] for name in _AROUND_AN_ANSWER},
    {
        "THINKING": "Preparing the answer…",
        "ANSWER_DONE": "The answer is complete.",
        "ANSWER_META": "Answered in {seconds} s · {llm_calls} AI calls",
        "SOURCES_CAPTION": "Sources",
        "SOURCE_BUTTON": "Source {index}: open {label}",
        "FOLLOWUP_CAPTION": "Ask next",
        "FEEDBACK_QUESTION": "Was this answer helpful?",
        "FEEDBACK_UP": "👍 Helpful",
        "FEEDBACK_DOWN": "👎 Not helpful",
    },
    {
        "THINKING": "Đang chuẩn bị câu trả lời…",
        "ANSWER_DONE": "Câu trả lời đã xong.",
        "ANSWER_META": "Trả lời trong {seconds} giây · {llm_calls} lần gọi AI",
        "SOURCES_CAPTION": "Nguồn",
        "SOURCE_BUTTON": "Nguồn {index}: xem {label}",
        "FOLLOWUP_CAPTION": "Hỏi tiếp",
        "FEEDBACK_QUESTION": "Câu trả lời có hữu ích không?",
        "FEEDBACK_UP": "👍 Hữu ích",
        "FEEDBACK_DOWN": "👎 Chưa hữu ích",
    },
)
# The labels around an answer in each language the detector names (rag/lang), for the page to pick per answer.
ANSWER_LABELS = {language: {name: getattr(_answer_labels_for(language), name) for name in _AROUND_AN_ANSWER}
                 for language in LANGUAGES}
