"""How a question asks for a figure and how a regulation states one, for retrieval and the answer alike.

"며칠 쉴 수 있어?" is answered by a number of days ("14일"), "몇 주는 수업해야 해?" by a number of weeks ("30주"):
the unit asked for is often the only word the question and the answering provision share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.lang.questions import AMOUNT_WORDS

# What a question asks for when it wants a figure, a deadline or a limit.
ASKS_FIGURE = re.compile(r"몇|며칠|얼마|언제|까지|기간|기한|최대|최소|한도|상한|비율|퍼센트|%|시간|일수|금액")
# A question that can only be answered by a figure: how many, how much, how long.
ASKS_AMOUNT = re.compile("|".join(AMOUNT_WORDS))
# A figure with its unit in the regulation's text: 15일, 8시간, 3년, 100분의 70, 80퍼센트, 3천만원, 다음 날.
FIGURE = re.compile(r"(?<!\d)\d+\s*(일|시간|년|개월|주|회|명|퍼센트|%|원|배|세|학기|학점)|분의\s*\d+"
                    r"|(?<![일이삼사오육칠팔구십백천만])[일이삼사오육칠팔구십백천만]+\s*원"
                    r"|다음\s*날|전날"  # a deadline stated by its day answers "언제까지" too
                    r"|매\s*(?:년|월|주|일|분기|학기|회계연도)")  # and a frequency by its period: "몇 년에 한 번"

# A condition on a number: what a question sets ("1년 지나면", "3년 넘게", "6개월 안 됐는데") and what a provision
# states ("1년 미만인", "3년 이상"); the last group tells "at least" from "less than".
# `(?<!\d)`: a number is read from its first digit only (from every digit, a long run is quadratic).
_NUMBER_WITH_UNIT = r"(?<!\d)(\d+)\s*(년|개월|달|주|일|시간|명|세)"
ASKED_CONDITION = re.compile(_NUMBER_WITH_UNIT + r"\s*(?:차|째|간|이)?\s*"
                             r"(?:(이상|넘|지나|지났|초과|되면|된\s|후)|(미만|안\s*(?:됐|된|되|넘)|이내|이하|못))")
STATED_CONDITION = re.compile(_NUMBER_WITH_UNIT + r"\s*(?:간|을|를)?\s*(?:(이상|초과|넘는)|(미만|이내|이하))")

_HOW_LONG = re.compile(r"얼마\s*(?:동안|간)|얼마나\s*(?:오래|길게)")

# "How many <unit>?" → a number with that unit. "몇 분" is left out: minutes or people.
_ASKED_UNITS = (
    (re.compile(r"며칠|몇\s*일"), re.compile(r"\d\s*일")),
    (re.compile(r"몇\s*주"), re.compile(r"\d\s*주")),
    (re.compile(r"몇\s*(년|해)"), re.compile(r"\d\s*년")),
    (re.compile(r"몇\s*(개월|달)"), re.compile(r"\d\s*개월")),
    (re.compile(r"몇\s*시간"), re.compile(r"\d\s*시간")),
    (re.compile(r"몇\s*(명|사람)"), re.compile(r"\d\s*(명|인)")),
    (re.compile(r"몇\s*(번|회|차례)"), re.compile(r"\d\s*(번|회)")),
    (re.compile(r"몇\s*(살|세)"), re.compile(r"\d\s*(세|살)")),
    (re.compile(r"몇\s*(퍼센트|%|프로)"), re.compile(r"\d\s*(퍼센트|%)|분의\s*\d")),
    (re.compile(r"몇\s*학점"), re.compile(r"\d\s*학점")),
    # "얼마 동안" asks for a length of time; any other "얼마" for an amount of money or a rate ("얼마나 더 줘?" →
    # 100분의 50, "얼마까지 돼?" → 8만원).
    (_HOW_LONG, re.compile(r"\d\s*(년|개월|주|일)")),
    (re.compile(r"얼마(?!\s*(?:동안|간|나\s*오래|나\s*길게))"),
     re.compile(r"\d\s*(?:[만천백]\s*)?원|분의\s*\d|\d\s*(?:퍼센트|%)")),
)


def asked_quantities(question: str) -> tuple[re.Pattern[str], ...]:
    """How the figures a question asks for are written ("몇 주는 수업해야 해?" → a number of weeks)."""
    return tuple(stated for asked, stated in _ASKED_UNITS if asked.search(question))


def numeric_conditions(text: str, pattern: re.Pattern[str]) -> set[tuple[str, str, bool]]:
    """(number, unit, at least?) of each numeric condition in `text` (`ASKED_CONDITION` or `STATED_CONDITION`)."""
    return {(m.group(1), m.group(2), m.group(3) is not None) for m in pattern.finditer(text)}


def with_figure_units(tokens: Iterable[str]) -> set[str]:
    """Tokens plus the units of their figures, for matching question words: "4시간" answers "몇 시간", "3개월"
    answers "몇 개월"."""
    found = set(tokens)
    found.update(t.lstrip("0123456789") for t in found.copy() if t[:1].isdigit())
    return found
