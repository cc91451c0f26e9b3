"""Every user-facing Korean string of the core: status lines, refusals, errors.

Adapters keep only their own button labels; everything a user reads about an answer comes from here.
"""

# Status lines shown while the pipeline works (AnswerEvent.status).
STATUS_UNDERSTANDING = "질문을 이해하고 있어요…"
STATUS_LOOKUP = "규정 조문을 찾고 있어요…"
STATUS_SEARCHING = "관련 규정을 검색하고 있어요…"
STATUS_RESEARCHING = "검색어를 바꿔 한 번 더 찾아보고 있어요…"
STATUS_WRITING = "답변을 작성하고 있어요…"
STATUS_VERIFYING = "인용한 조문과 답변을 대조하고 있어요…"
STATUS_QUEUED = "질문이 많아 잠시 대기 중이에요. 대기 순서: {position}번째"

# Answers that are not drawn from a document.
CHITCHAT_GREETING = "안녕하세요! 회사 규정이나 법령에 대해 궁금한 점을 물어보세요. 예: \"연차는 며칠까지 쓸 수 있어?\""
CHITCHAT_THANKS = "도움이 되었다니 다행이에요. 다른 규정도 궁금하면 언제든 물어보세요."
CHITCHAT_OTHER = "저는 규정 안내 도우미예요. 근로시간, 휴가, 출장비 같은 규정을 물어보시면 조문을 찾아 알려드릴게요."
NOT_FOUND = (
    "등록된 규정에서 이 질문에 대한 내용을 찾지 못했어요. "
    "규정에 없는 사항일 수 있으니 담당 부서(인사·총무팀)에 확인해 주세요."
)
LOOKUP_NOT_FOUND = "'{query}'에 해당하는 조문을 찾지 못했어요. 규정 이름과 조 번호를 확인해 주세요."
OUTLINE_MORE = "  … 외 {count}개"
RULE_CODE_SUFFIX = " (규정 제{code}호)"  # after a regulation's name in an overview
FULLTEXT_HEADER = "**{doc} 전문** ({page}/{pages}쪽)"
FULLTEXT_NEXT = "다음 쪽은 '{doc} 전문 {page}쪽'이라고 물어봐 주세요."
LOOKUP_AMBIGUOUS = "'{name}'에 해당하는 규정이 여러 개예요: {candidates}. 정확한 이름으로 다시 물어봐 주세요."
EXTRACTIVE_INTRO = "관련 규정은 다음과 같아요."
EXTRACTIVE_PART = "**{question}**"
OFFLINE_NOTE = "(AI 응답을 받을 수 없어 규정 원문을 그대로 인용했어요.)"
UNVERIFIED_NOTE = "(일부 내용은 인용 조문에서 확인되지 않아 제외했어요.)"

# Input problems and failures.
EMPTY_QUESTION = "질문 내용이 비어 있어요. 궁금한 규정을 문장으로 적어 주세요. 예: \"출장비는 어떻게 정산해?\""
NO_TEXT_QUESTION = "이모지나 기호만으로는 질문을 이해하기 어려워요. 궁금한 점을 글로 적어 주세요."
TOO_LONG_QUESTION = "질문이 너무 길어요({length:,}자). {limit:,}자 이내로 핵심만 적어 주세요."
RATE_LIMITED = "요청이 너무 많아요. {seconds}초 뒤에 다시 물어봐 주세요."
BUSY = "지금은 질문이 몰려 답변할 수 없어요. 잠시 뒤 다시 물어봐 주세요."
INTERNAL_ERROR = "죄송해요, 답변을 만드는 중 문제가 생겼어요. 잠시 뒤 다시 시도해 주세요."
INDEX_UNAVAILABLE = "규정 색인을 지금 사용할 수 없어요. 관리자에게 `regbot ingest` 실행 여부를 확인해 주세요."
TIMEOUT = "답변 시간이 너무 오래 걸려 여기서 멈췄어요. 질문을 조금 더 구체적으로 다시 물어봐 주세요."
STREAM_INTERRUPTED = "(답변 도중 연결이 끊겼어요. 위 내용까지만 확인됐어요.)"

# --- Chat adapters (Slack, Teams): replies about buttons rather than about an answer. ---
FEEDBACK_THANKS = "의견 고마워요! 더 나은 답변을 만드는 데 반영할게요."
SHARE_FAILED = "채널에 공유하지 못했어요. 봇이 이 채널에 초대되어 있는지 확인해 주세요."
