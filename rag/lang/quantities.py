"""How a question asks for a figure and how a regulation states one, for retrieval and the answer alike.

"며칠 쉴 수 있어?" is answered by a number of days ("14일"), "몇 주는 수업해야 해?" by a number of weeks ("30주"):
the unit asked for is often the only word the question and the answering provision share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# A figure with its unit in the regulation's text: 15일, 8시간, 3년, 100분의 70, 80퍼센트, 3천만원, 다음 날.
FIGURE = re.compile(r"(?<!\d)\d+\s*(일|시간|년|개월|주|회|명|퍼센트|%|원|배|세|학기|학점)|분의\s*\d+"
                    r"|(?<![일이삼사오육칠팔구십백천만])[일이삼사오육칠팔구십백천만]+\s*원"
                    r"|다음\s*날|전날"  # a deadline stated by its day answers "언제까지" too
                    r"|매\s*(?:년|월|주|일|분기|학기|회계연도)")  # and a frequency by its period: "몇 년에 한 번"

# A condition on a number: what a question sets ("1년 지나면", "3년 넘게", "6개월 안 됐는데") and what a provision
# states ("1년 미만인", "3년 이상"); the last group tells "at least" from "less than".
# `(?<!\d)`: a number is read from its first digit only (from every digit, a long run is quadratic).
_NUMBER_WITH_UNIT = r"(?<!\d)(\d+)\s*(년|개월|달|주|일|시간|명|세)"
STATED_CONDITION = re.compile(_NUMBER_WITH_UNIT + r"\s*(?:간|을|를)?\s*(?:(이상|초과|넘는)|(미만|이내|이하))")


def numeric_conditions(text: str, pattern: re.Pattern[str]) -> set[tuple[str, str, bool]]:
    """(number, unit, at least?) of each numeric condition `pattern` finds in `text` (`STATED_CONDITION`)."""
    return {(m.group(1), m.group(2), m.group(3) is not None) for m in pattern.finditer(text)}


_FIGURE_DIGITS = "0123456789.,"
_SPACE = re.compile(r"\s+")
_NOT_UNIT = re.compile(r"[\d.,]")


def figure_unit(token: str) -> str:
    """The unit of a figure token ("3일" → "일", "1,000원" → "원"); "" for a bare number."""
    return token.lstrip(_FIGURE_DIGITS)


def with_figure_units(tokens: Iterable[str]) -> set[str]:
    """Tokens plus the units of their figures, for matching question words: "4시간" answers "몇 시간", "3개월"
    answers "몇 개월"."""
    found = set(tokens)
    found.update(figure_unit(t) for t in found.copy() if t[:1].isdigit())
    return found


def stated_figures(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> dict[str, set[str]]:
    """The figures `text` states, by unit: each (name, pattern)'s matches widened to their whole number ("15일",
    "1,000원"), keyed by the name, or by the figure's own unit when the name is empty."""
    found: dict[str, set[str]] = {}
    for name, pattern in patterns:
        for m in pattern.finditer(text):
            start, end = m.start(), m.end()  # a pattern may match the last digit only ("\d\s*일")
            while start > 0 and text[start - 1] in _FIGURE_DIGITS:
                start -= 1
            while end < len(text) and text[end] in _FIGURE_DIGITS:
                end += 1
            figure = _SPACE.sub("", text[start:end])
            if any(ch.isdigit() for ch in figure):
                found.setdefault(name or _NOT_UNIT.sub("", figure), set()).add(figure)
    return found
