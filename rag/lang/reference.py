"""The grammar of a regulation reference, in one place: 제N조의M 제K항, 편/장/절/관, 별표/별지, 부칙, 시행령/시행규칙,
「」 names, rule codes (제3-1-24호) and the dates of 부칙.

Three readers use it, so each construct comes in the forms they need, built from the same fragments:
- headings: a line of a regulation's text that opens a unit (the parser, the loaders), anchored at the line start;
- citations: a reference inside an article's body ("「근로기준법」 제60조", "법 제46조"), searched;
- questions: what a user types ("근기법 60조 2항", "제4장", "별표 2", "부칙"), with 제 optional and spaces anywhere.

Every searched pattern starts only at 제 or at a number's first digit (`(?<!\\d)`, possessive runs), so it stays linear
on a stranger's text (tests/unit/test_regex_worst_cases.py).
"""

from __future__ import annotations

import re

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
DIVISION_RANK = {"편": 0, "장": 1, "절": 2, "관": 3}
# "43조의2" with spaces allowed anywhere ("43 조 의 2"): number, branch.
_ARTICLE_NUMBER = r"(\d+)\s*조(?:\s*의\s*(\d+))?"
_ARTICLE_NUMBER_PLAIN = r"\d+\s*조(?:\s*의\s*\d+)?"
_DIVISION_WORD = r"(편|장|절|관)"
_SUBORDINATE_WORDS = r"(시행령|시행규칙)"

# --- Headings: a line of a regulation's text -------------------------------------------------------------------
# "제2장 근로계약", "제1절의2": number, kind, branch, title.
DIVISION_HEADING = re.compile(r"^제\s*(\d+)\s*" + _DIVISION_WORD + r"(?:의\s*(\d+))?(?:\s+(.*))?$")
# "제43조의2(연차) 본문": number, branch, title, the text after the title.
ARTICLE_HEADING = re.compile(r"^제\s*" + _ARTICLE_NUMBER + r"\s*(?:[(（]([^)）]{0,60})[)）])?\s*(.*)$")
# "부칙", "부 칙 <제12호, 2024.1.1.>": the mark in brackets.
ADDENDA_HEADING = re.compile(r"^부\s*칙(?:\s*[<〈(]([^>〉)]*)[>〉)])?\s*$")
# "[별표 2] 여비 지급표", "별지 제1호의2 서식": kind, number, branch, title.
ANNEX_HEADING = re.compile(r"^\[?\s*(별표|별지)\s*(?:제\s*)?(\d+)(?:\s*호)?(?:의\s*(\d+))?\s*(?:서식)?\s*\]?\s*(.*)$")
# The body of a deleted article: "삭제 <2024. 1. 1.>".
DELETED_BODY = re.compile(r"^삭제\s*(?:<[^>]*>)?\s*$")
# The 장 of a chapter path part ("제4장 임금" → 제4장).
_CHAPTER = re.compile(r"(제\d+장(?:의\d+)?)")
# A 항 line of an article body: its marker.
PARAGRAPH_LINE = re.compile(rf"^\s*([{CIRCLED}])")
# A line that starts a new unit: 조 with its title, 장/절/편/관 headings, 부칙, 별표, 항 ①, 호 "1." or "12의2.",
# 목 "가.", bullets. "제50조, 제69조 본문 …" or "제2장에 따른 …" at the start of a line is a reference inside
# a wrapped sentence (PDF lines).
UNIT_START = re.compile(
    r"^(?:제\s*" + _ARTICLE_NUMBER_PLAIN + r"\s*(?:[(（]|$)"
    r"|제\s*\d+\s*(?:장|절|편|관)(?:\s*의\s*\d+)?(?:\s+(?!및|또는|부터|까지|내지)|$)"
    r"|부\s*칙|\[?\s*별\s*[표지]|[①-⑳]|\d{1,2}(?:의\d+)?\s*[.)](?:\s|$)|\(\s*\d{1,2}\s*\)"
    r"|[가-하]\s*[.)](?:\s|$)|\(\s*[가-하]\s*\)|[-•·○●◦□■▪▶※*]\s|[ⅰ-ⅻⅠ-Ⅻ])"
)
# A 목 line ("가.", "나)"): its letter.
SUBITEM_START = re.compile(r"^([가-하])\s*[.)](?:\s|$)")

# --- Citations: a reference inside a text ----------------------------------------------------------------------
# 「근로기준법」 제2조, 법 제46조, 영 제14조, 같은 법 제60조, 제43조의2, 제60조제1항 …: named, law, number, branch.
CITATION = re.compile(
    r"(?:「(?P<named>[^」]{2,40})」\s*|(?P<law>(?<![가-힣])(?:같은\s*법|법|영|시행령)\s+))?"
    r"제(?P<number>\d+)조(?:의(?P<branch>\d+))?"
)
# A citation of another regulation by name: 「근로기준법」 제60조, 「근로기준법 시행령」 제30조의2 제1항
# (name, article, paragraph).
NAMED_CITATION = re.compile(r"「([^」]{2,60})」\s*(제\s*" + _ARTICLE_NUMBER_PLAIN + r")(?:\s*(제\s*\d+\s*항))?")
# An article named anywhere in a question ("제20조", "43조의2"): number, branch.
ARTICLE_MENTION = re.compile(r"(?:제\s*+|(?<!\d))(\d++)\s*+조(?:\s*+의\s*+(\d+))?")
# An article number an earlier reply names ("근로기준법 제60조", "제43조의 2"), read with the name before it.
ARTICLE_NUMBER_NAMED = re.compile(r"제\s?\d+\s?조(?:의\s?\d+)?")
# How much text before an article number may hold the regulation's name ("근로기준법 시행령 제30조").
NAME_WINDOW = 40
# A rule code or a numbered reference anywhere ("3-1-24", "2.3.1", "제5조", "제2항").
NUMBERED_REFERENCE = re.compile(r"(?<!\d)\d+\s*[-.]\s*\d+|제\s*\d+\s*[조항호장절]")  # from a number's first digit

# --- Questions: what a user types ------------------------------------------------------------------------------
_ARTICLE_START = r"^\s*(?:제\s*)?" + _ARTICLE_NUMBER  # 제60조, 43조의2
# "60조", "제60조 2항", "43조의2 제1항 …": number, branch, paragraph, rest.
ARTICLE_REF = re.compile(_ARTICLE_START + r"(?:\s*(?:제\s*)?(\d+)\s*항)?(.*)$")
ARTICLE_START = re.compile(_ARTICLE_START)
# Several articles of one regulation: "제60조랑 제61조", "60조, 62조 및 63조".
ARTICLE_JOIN = re.compile(r"^\s*(?:이랑|랑|와|과|및|하고|그리고|,|、)\s*(?=(?:제\s*)?\d+\s*조)")
# "2항은?" right after an article: number, rest.
PARAGRAPH_REF = re.compile(r"^\s*(?:제\s*)?(\d+)\s*항(.*)$")
# "제4장", "3장의2": number, kind, branch, rest.
DIVISION_REF = re.compile(r"^\s*(?:제\s*)?(\d+)\s*" + _DIVISION_WORD + r"(?:\s*의\s*(\d+))?(.*)$")
# "별표 2", "[별지 제1호 서식]", "서식 3": kind, number, branch, rest.
ANNEX_REF = re.compile(r"^\s*\[?(별표|별지|서식)\s*(?:제\s*)?(\d+)\s*(?:호)?(?:\s*의\s*(\d+))?\s*(?:서식)?\]?(.*)$")
# The whole text of a regulation, optionally one page of it: "전문", "전문 2쪽", "전문 3페이지", "원문 2".
# The last word of a bare reference ("제20조", "제1항", "제3장", "별표1", "전문"): what a follow-up button ends in.
REFERENCE_WORD = re.compile(r"(?:제?(?<!\d)\d++(?:조(?:의\d++)?|[항호]|[편장절관](?:의\d++)?)|별표\d*+|전문)")
FULLTEXT_REF = re.compile(r"^\s*(?:전문|원문|전체\s*조문)\s*(?:(\d+)\s*(?:쪽|페이지|p)?)?(.*)$")
ADDENDA_REF = re.compile(r"^\s*부\s*칙(.*)$")
# "시행령"/"시행규칙" right after a law's name (with or without a space).
SUBORDINATE = re.compile(r"^\s*" + _SUBORDINATE_WORDS)
# "…줘" and its politer or question forms: 주세요, 줄래?, 주실래요?, 줄 수 있어?, 주실 수 있나요?
_PLEASE = r"(?:줘|주세요|줄래요?|주실래요?|줄\s*수\s*있(?:어|어요|나요)|주실\s*수\s*있(?:어요|나요))"
# What may follow a reference and still make it a pure lookup ("…보여줘", "…전문", "… 전체 요약해줘": a regulation's
# outline is its summary; "…제3조(출장 신청)에 대해 알려줘", the offline follow-up buttons' wording).
# `\s*+`: possessive, so a run of spaces is never shared out among the optional parts (40 spaces took 38 s).
LOOKUP_REST = re.compile(
    r"^\s*+(?:\([^()]{1,40}\))?\s*+(?:에\s*+대해서?|에\s*+대한)?"
    r"\s*+(?:에는|에선|에서는|엔|은|는|이|가|을|를|에|의|도)?\s*+(?:전체\s*+)?(?:조문|전문|원문|내용|목차|조항|요약|개요|구성)?\s*+"
    r"(?:은|는|이|가|을|를)?\s*+(?:그대로\s*+|좀\s*+)?"
    r"(?:(?:보여|알려|찾아)\s*+" + _PLEASE + r"|(?:요약|정리)\s*+해\s*+" + _PLEASE +
    r"|뭐야|뭐예요|뭔가요|뭐지|(?:뭐라고|어떻게)\s*+(?:되어|돼|나와|써|적혀|정해져)\s*+있(?:어|어요|나요|니|지)?|있(?:어|어요|나요)"
    r"|(?:무슨|어떤)\s*+(?:내용|조항|조문|규정)\s*+(?:이야|이에요|인가요|이지|이죠|야)?"
    # What a chapter holds: "제1장에는 어떤 조문들 있어?", "제3장엔 뭐뭐 들어있어?"
    r"|(?:무슨|어떤|뭐뭐|무엇무엇)\s*+(?:내용|조항|조문|규정|것|게)?\s*+들?\s*+(?:이|가)?\s*+(?:들어\s*+)?"
    r"(?:있어|있어요|있나요|있니|있지|나와\s*+있어)"
    r"|는\?|은\?|이란\?|란\?)?\s*+[?.!]*\s*+$")
# How a regulation's name ends ("취업규칙", "여비 규정", "근로기준법", "…시행령"): a reference naming one that is not
# indexed is answered "not registered", never searched (a search would quote some other regulation's article).
REGULATION_NAME = re.compile(r".(?:법|법률|령|규칙|규정|지침|세칙|요령|내규|규약|정관|학칙|조례)$")
# Where a regulation's name stops in a question: at the first reference after it.
NAME_END = re.compile(r"(?<!\s)\s*+(?:제?\s*(?<!\d)\d+\s*[조장절관편]|별표|별지|서식|부칙|전문|원문|시행령|시행규칙)")
# Collection names that mean statutes when the operator has not listed them.
LAW_COLLECTION = re.compile(r"(^|[-_ ])(law|laws|statute|statutes|legal)($|[-_ ])|법령|법률", re.IGNORECASE)

# --- Rule codes: a regulation's own number ----------------------------------------------------------------------
# "3-1-24", "제3-1-24호", "규정 제3-1-24호", "규정번호 3-1-24": two to four dash-separated numbers, at the start of a
# title or a question.
RULE_CODE = re.compile(
    r"^\s*(?:규정\s*(?:번호)?\s*:?\s*)?(?:제\s*)?(\d{1,4}(?:\s*-\s*\d{1,4}){1,3})(?:\s*호)?(?![\d-])")
# The same number after a title, in brackets: "여비 규정(제3-1-24호)".
RULE_CODE_SUFFIX = re.compile(r"(?<!\s)\s*+[(\[]\s*(?:규정\s*)?(?:제\s*)?(\d{1,4}(?:-\d{1,4}){1,3})\s*호?\s*[)\]]\s*$")

# --- Dates -----------------------------------------------------------------------------------------------------
# 2026-03-01, 2026.3.1, 2026. 3. 1., 2026년 3월 1일, 20260301
DATE = re.compile(r"(\d{4})\s*(?:[-./]|년)\s*(\d{1,2})\s*(?:[-./]|월)\s*(\d{1,2})|(\d{4})(\d{2})(\d{2})")
# "이 규칙은 2026년 3월 1일부터 시행한다." in a 부칙 block.
ENFORCED_FROM = re.compile(r"(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일\s*부터\s*시행")
_DIVISION_LABEL = re.compile(r"제\d+[편장절관](의\d+)?")


def article_label(number: int, branch: int | None) -> str:
    """(43, 2) → 제43조의2."""
    return f"제{number}조" + (f"의{branch}" if branch else "")


def paragraph_number(marker: str) -> int | None:
    """① → 1; None for anything that is not a circled number."""
    return CIRCLED.index(marker) + 1 if marker and marker in CIRCLED else None


def paragraph_marker(number: int) -> str:
    """1 → ①."""
    return CIRCLED[number - 1]


def paragraph_label(marker: str) -> str:
    """① → 제1항."""
    number = paragraph_number(marker)
    return f"제{number}항" if number else marker


def article_of(number: str, branch: str | None) -> str:
    """The label of matched digits ("43", "2") → 제43조의2; no branch → 제43조."""
    return article_label(int(number), int(branch) if branch else None)


def is_division_label(label: str) -> bool:
    """"제2장", "제1절의2": a 편/장/절/관 label rather than an article's."""
    return _DIVISION_LABEL.fullmatch(label) is not None


def chapter_of(part: str) -> str:
    """The 장 label a chapter-path part starts with ("제4장 임금" → 제4장), or ""."""
    match = _CHAPTER.match(part)
    return match.group(1) if match else ""
