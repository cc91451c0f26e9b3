"""Korean small talk, by kind: greetings, thanks, goodbyes, pauses, reactions, apologies, praise, complaints, tests,
moods, and questions about the bot itself (read by `rag.stages.router.OfflineQueryRouter`).

Small talk is recognised by the kind of utterance, never by a list of sentences. English and Vietnamese small
talk is `rag.lang.smalltalk`.
"""

from __future__ import annotations

import re

# Kinds of small talk, checked in this order (a goodbye often thanks too: "수고했어, 고마워" is a goodbye).
# Questions about the bot itself come first: they are questions, but not about a regulation.
SMALL_TALK_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("identity", re.compile(
        r"(너|넌|니가|네가|당신|regbot)\s*(은|는|이|가)?\s*(누구|뭐야|뭔데|정체|이름|몇\s*살|나이)"
        r"|누가\s*(만든|만들었|개발한|개발했)"
        r"|(사람|인간|ai|인공지능|로봇|챗봇|봇|기계|gpt)\s*(이)?\s*(야|예요|이에요|인가요|이니|니|임|맞아)(?![가-힣])",
        re.I)),
    ("capability", re.compile(
        r"(뭘|뭐를?|무엇을?|어떤\s*(질문|것|거|걸|내용|규정|일)\S*)\s*(까지\s*)?.{0,6}?"
        r"(물어|질문|답해|대답|도와|도움|알려\s*줄\s*수|할\s*수\s*있|알고\s*있|아는|알아)"
        # Which regulations are there: "어떤 규정들이 등록돼 있어?", "무슨 문서가 들어 있어?".
        r"|((어떤|무슨|어느)\s*(규정|문서|법령|자료)\S*\s*(있|등록|들어))"
        r"|(할\s*수\s*있는\s*(게|것|일))|(무슨\s*일\s*(을|를)?\s*해)"
        # What the bot answers from: "어떤 자료를 보고 대답해?", "무슨 문서 기반이야?", "어디서 정보를 가져와?".
        r"|((어떤|무슨|어느|뭘|뭐)\s*(자료|문서|데이터|정보)\S*\s*(보고|참고|바탕|기반|토대|가지고|답|대답))"
        r"|(어디(서|에서)\s*(자료|문서|데이터|정보)\S*\s*(가져|찾|얻|보))", re.I)),
    ("usage", re.compile(
        r"(어떻게\s*(써|쓰는|쓰면|사용|이용|물어|질문))|사용법|사용\s*방법|이용\s*방법|도움말|^\s*/?help\s*$",
        re.I)),
    ("goodbye", re.compile(
        r"(여기까지|(내일|다음에|나중에|월요일에|또)\s*(봐|봬|뵈|만나)|잘\s*(가|있어|자)|안녕히|수고\s*(했|하셨|하세요|많)"
        r"|퇴근(할게|합니다|해요|하러)|바이\b|bye|빠이|들어가(세요|볼게)"
        r"|(다음에|나중에)\s*(또\s*)?(물어|올게|찾아|연락))", re.I)),
    ("thanks", re.compile(
        r"(고마워|고맙|감사(합|해|했|드|요|\s*$|!)|땡큐|thank|덕분(에|이에요|입니다)|도움이\s*(됐|되었|많이))", re.I)),
    ("apology", re.compile(r"(죄송|미안|잘못\s*(보냈|올렸|눌렀)|엉뚱한|실수로)")),
    ("pause", re.compile(
        r"(잠깐|잠시만|잠시\s*(만요|기다)|기다려\s*(줘|봐|주세요)|이따가?\s*(다시|물어)|다시\s*물어\s*볼게)")),
    ("greeting", re.compile(
        r"(안녕|반가|하이\b|헬로|hello|hi\b|좋은\s*(아침|하루|저녁|오후)|굿모닝|잘\s*지내|처음\s*뵙)",
        re.I)),
    # What the user thinks of the bot or its last answer.
    ("praise", re.compile(
        r"(똑똑|잘\s*(한다|하네|하는구나|했어)|최고(야|다|네|예요|에요)(?![가-힣])|훌륭하|대단하|짱(이야|이네|이다)?(?![가-힣])"
        r"|유용(하|했)|good\s*job|nice\b)", re.I)),
    ("complaint", re.compile(
        r"((답|답변|대답|알려\s*준\s*(거|게|것)|말한\s*(거|게|것))\S{0,20}\s*(이|가|은|는)?\s*(틀렸|틀린|이상|별로|엉터리|잘못|엉뚱)"
        r"\S*\s*[?？]?"
        r"|도움이\s*(안|하나도\s*안|별로\s*안)\s*(됐|돼|되)|별로(야|네|예요|에요|다)(?![가-힣])|쓸모\s*없)")),
    # A message that only checks the bot is there.
    ("test", re.compile(r"^\s*(테스트|test|ping|핑)\s*(입니다|중|해요|해봄|합니다)?\s*[.!?~ㅎ]*\s*$", re.I)),
    # Moods, the weather, the weekday, laughter: talk that asks nothing about rules.
    ("other", re.compile(
        r"(기분|날씨|덥다|춥다|금요일|월요일|주말이라|배고|심심|피곤|졸려|좋다\s*ㅎ|ㅎㅎ|ㅋㅋ|ㅠㅠ|ㅜㅜ)")),
)
# A bare acknowledgement or reaction once laughter, jamo, emoji and punctuation are gone.
REACTION_WORDS = frozenset({
    "", "네", "넵", "넹", "예", "응", "웅", "어", "오", "와", "우와", "헐", "대박", "굿", "좋아", "좋아요", "좋네요",
    "알겠어", "알겠어요", "알겠습니다", "알았어", "오케이", "ok", "okay", "확인", "확인했어요", "그렇구나", "그렇군요",
    "아하", "아", "음", "흠", "오호", "옙", "yes", "ㅇㅋ",
})
REACTION_NOISE = re.compile(r"[ㄱ-ㅣ\s~!?.,…^_\-—·'\"()\[\]]+|[\U0001F000-\U0001FFFF\u2600-\u27BF\uFE0F]")
