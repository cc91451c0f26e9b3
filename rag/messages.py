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
# While the answer's LLM consults a tool (rag/stages/agent_tools.py); the placeholders are cut short.
STATUS_TOOL_ARTICLE = "{article}를 확인하고 있어요…"
STATUS_TOOL_SEARCH = "'{query}' 관련 규정을 더 찾아보고 있어요…"
STATUS_TOOL_OVERVIEW = "{doc}의 구성을 확인하고 있어요…"

# Small talk (one reply per kind of utterance; never retrieval, never "not found").
CHITCHAT_GREETING = (
    "안녕하세요! 규정 안내 도우미예요. 궁금한 규정을 평소 말투로 물어보시면 조문을 찾아 근거와 함께 알려 드려요. "
    "무엇을 물어볼 수 있는지 궁금하면 \"뭘 물어볼 수 있어?\"라고 해 보세요."
)
CHITCHAT_MORNING = "좋은 아침이에요! 오늘도 규정이 궁금할 때 편하게 물어보세요."
CHITCHAT_THANKS = "도움이 되었다니 다행이에요. 다른 규정도 궁금하면 언제든 물어보세요."
CHITCHAT_GOODBYE = "수고 많으셨어요! 규정이 궁금할 때 언제든 다시 불러 주세요."
CHITCHAT_PAUSE = "네, 천천히 보세요. 준비되면 언제든 이어서 물어봐 주세요."
CHITCHAT_REACTION = "😊 더 궁금한 규정이 있으면 편하게 물어보세요."
CHITCHAT_APOLOGY = "괜찮아요! 규정이 궁금할 때 언제든 물어보세요."
CHITCHAT_PRAISE = "고마워요! 😊 다른 규정도 궁금하면 편하게 물어보세요."
CHITCHAT_COMPLAINT = (
    "도움이 되지 못해 죄송해요. 어떤 상황인지(누가, 언제, 어떤 규정)를 조금 더 적어 다시 물어봐 주시면 다시 "
    "찾아볼게요. 답변 아래 👎 버튼으로 알려 주시면 개선에 반영돼요."
)
CHITCHAT_TEST = "네, 잘 작동하고 있어요. 궁금한 규정을 물어보세요."
CHITCHAT_IDENTITY = (
    "저는 사람이 아니라 AI 규정 안내 도우미예요. 등록된 규정·법령 문서에서 조문을 찾아 그 근거(조문 번호와 원문)와 "
    "함께 답해 드려요. 규정에 없는 내용은 지어내지 않고 담당 부서를 안내해 드려요."
)
CHITCHAT_CAPABILITY = "등록된 규정에 관한 질문이라면 무엇이든 물어보세요. 지금 찾아볼 수 있는 규정: {documents}."
CHITCHAT_USAGE = (
    "궁금한 점을 평소 말투로 적어 주세요. 제가 관련 조문을 찾아 인용과 함께 답해 드려요. "
    "조문 번호로 바로 볼 수도 있어요(예: \"{reference}\"). 답 아래의 후속 질문을 눌러 이어서 물어볼 수도 있어요."
)
CHITCHAT_EXAMPLES = "예를 들면:\n{examples}"
CHITCHAT_EXAMPLE = "• {question}"
CHITCHAT_EXAMPLE_QUESTION = "{doc}에서 {title}에 대해 알려줘"
CHITCHAT_OTHER = (
    "그렇군요! 저는 규정 안내 도우미예요. 근로시간, 휴가, 출장비 같은 규정을 물어보시면 조문을 찾아 알려 드릴게요."
)
CHITCHAT_OFF_TOPIC = (
    "그건 제가 알려 드릴 수 없어요. 저는 등록된 규정에서 답을 찾는 도우미예요. "
    "근로시간, 휴가, 출장비 같은 규정을 물어보시면 조문을 찾아 알려 드릴게요."
)
CHITCHAT_DEFAULT_DOCUMENTS = "회사 규정과 법령"
MORE_DOCUMENTS = " 외 {count}개"

# When the regulations are silent: what was looked for, the closest regulations, and whom to ask.
NOT_FOUND = (
    "등록된 규정에서 이 질문에 대한 내용을 찾지 못했어요. "
    "규정에 없는 사항일 수 있으니 담당 부서(인사·총무팀)에 확인해 주세요."
)
NOT_COVERED = "등록된 규정에서 {looked_for}에 대한 내용은 찾지 못했어요."
NOT_ANSWERED = "{looked_for}은(는) 등록된 규정에 나오지만, 이 질문에 대한 답은 찾지 못했어요."
# 까지 reads right after any title (을/를 would have to agree with its last syllable).
NOT_COVERED_CLOSEST = "가장 가까운 {closest}까지 살펴봤지만 이 질문에 답하는 조문은 없었어요."
NOT_COVERED_ASK = (
    "회사 내부 운영이나 등록된 규정 밖의 사항일 수 있으니 담당 부서(인사·총무팀)나 해당 업무 담당자에게 확인해 주세요."
)
# When the evidence is middling: the closest article is quoted as such, with whom to ask about the case itself.
HEDGE_LEAD = "질문에 꼭 맞는 조문인지는 확실하지 않지만, 가장 가까운 조문은 이렇습니다."
HEDGE_ASK = (
    "구체적인 사정에 따라 달라질 수 있으니 인사팀이나 노무 담당자에게 확인해 주세요. "
    "근로 관계 법령은 고용노동부 고객상담센터(국번 없이 1350)에서도 상담받을 수 있어요."
)
LOOKUP_NOT_FOUND = "'{query}'에 해당하는 조문을 찾지 못했어요. 규정 이름과 조 번호를 확인해 주세요."
OUTLINE_MORE = "  … 외 {count}개"
RULE_CODE_SUFFIX = " (규정 제{code}호)"  # after a regulation's name in an overview
FULLTEXT_HEADER = "**{doc} 전문** ({page}/{pages}쪽)"
FULLTEXT_NEXT = "다음 쪽은 '{doc} 전문 {page}쪽'이라고 물어봐 주세요."
LOOKUP_DECREE_NOT_INDEXED = "「{doc}」의 {decree}은 등록된 규정에 없어요. 「{doc}」 본문은 찾아볼 수 있어요."
LOOKUP_DOC_NOT_INDEXED = (
    "「{doc}」은(는) 등록된 규정에 없어요. 등록된 규정의 조문만 찾아 드릴 수 있으니, 규정 이름을 확인하거나 "
    "내용을 질문으로 물어봐 주세요."
)
LOOKUP_MISSING = "{targets}는 「{doc}」에서 찾지 못했어요."
LOOKUP_CHOOSE = "{target}는 여러 규정에 있어요: {candidates}. 어느 규정의 {target}인지 골라 주세요."
LOOKUP_AMBIGUOUS = "'{name}'에 해당하는 규정이 여러 개예요: {candidates}. 정확한 이름으로 다시 물어봐 주세요."
EXTRACTIVE_PART = "**{question}**"
EXTRACTIVE_SUPPORT = "근거 조문:"
RELATED_LAW = "관련 법령:"  # the statutes an internal rule rests on (rag/stages/legal_basis.py)
RELATED_RULES = "관련 사내 규정:"  # the organisation's rules that implement a statute
OFFLINE_NOTE = "(AI 응답을 받을 수 없어 규정 원문을 그대로 인용했어요.)"
UNVERIFIED_NOTE = "(일부 내용은 인용 조문에서 확인되지 않아 제외했어요.)"
# What changed between versions of a regulation (rag/stages/changes.py) and the line an answer quoting an amended
# article adds.
CHANGES_HEADER = "**{doc} 개정 내역**"
CHANGES_RECENT_HEADER = "**최근 개정된 규정** (최근 {days}일)"
CHANGES_IN_FORCE = "{date} 시행 (버전 {old} → {new}, {ingested} 반영)"
CHANGES_PENDING = "{date}부터 시행 예정 (버전 {old} → {new}, {ingested} 반영). 그 전까지는 현행 조문이 적용돼요."
CHANGE_KINDS = {"changed": "변경", "added": "신설", "removed": "삭제", "renumbered": "조 번호 변경"}
CHANGE_LINE = "• {what} {kind}"
CHANGE_BEFORE = "  전: {text}"
CHANGE_AFTER = "  후: {text}"
CHANGES_MORE = "  … 외 {count}개 조문"
CHANGES_NONE = "{doc}은(는) 등록된 뒤로 바뀐 조문이 없어요."
CHANGES_NONE_ARTICLE = "{doc} {article}은(는) 등록된 뒤로 바뀌지 않았어요."
CHANGES_NONE_RECENT = "최근 {days}일 동안 개정된 규정은 없어요."
CHANGES_RECENT_DOC = "• {doc} — {when}: {articles}"
AMENDED_NOTE = "※ {label}: {date} 개정"
AMENDED_PENDING_NOTE = "※ {label}: 개정되어 {date}부터 시행 예정"

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
