"""Automatic paragraph numbers rendered as text.

Word lists and HWPX 문단 번호 can generate "제3조", "②" or "가." instead of storing them; regulations
authored that way would lose their structure if only the typed text were read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rag.models import CIRCLED

_CIRCLED = CIRCLED
_HANGUL_SYLLABLES = "가나다라마바사아자차카타파하"
_HANGUL_JAMO = "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"
_CIRCLED_HANGUL = "㉮㉯㉰㉱㉲㉳㉴㉵㉶㉷㉸㉹㉺㉻"
_SINO_KOREAN = "영일이삼사오육칠팔구"
_IDEOGRAPH = "〇一二三四五六七八九"
_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def _roman(value: int) -> str:
    out = ""
    for amount, numeral in _ROMAN:
        while value >= amount:
            out += numeral
            value -= amount
    return out


def _letters(value: int, alphabet: str) -> str:
    # Lists past the alphabet repeat the letter (aa, bb), as word processors do.
    index, repeat = (value - 1) % len(alphabet), (value - 1) // len(alphabet) + 1
    return alphabet[index] * repeat


def _digits(value: int, names: str) -> str:
    return "".join(names[int(d)] for d in str(value))


def format_number(value: int, style: str) -> str:
    """`value` in a canonical style: decimal, decimal_zero, circled, hangul_syllable, hangul_jamo,
    circled_hangul, upper_letter, lower_letter, upper_roman, lower_roman, sino_korean, ideograph, none."""
    if style == "none":
        return ""
    if value < 1:
        return str(value)
    if style == "decimal_zero":
        return f"{value:02d}"
    if style == "circled" and value <= len(_CIRCLED):
        return _CIRCLED[value - 1]
    if style == "hangul_syllable":
        return _letters(value, _HANGUL_SYLLABLES)
    if style == "hangul_jamo":
        return _letters(value, _HANGUL_JAMO)
    if style == "circled_hangul" and value <= len(_CIRCLED_HANGUL):
        return _CIRCLED_HANGUL[value - 1]
    if style == "upper_letter":
        return _letters(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    if style == "lower_letter":
        return _letters(value, "abcdefghijklmnopqrstuvwxyz")
    if style == "upper_roman":
        return _roman(value)
    if style == "lower_roman":
        return _roman(value).lower()
    if style == "sino_korean":
        return _digits(value, _SINO_KOREAN)
    if style == "ideograph":
        return _digits(value, _IDEOGRAPH)
    return str(value)


@dataclass(frozen=True)
class ListLevel:
    """One level of a list definition: its label template ("제%1조", "^1."), number style and start."""

    template: str
    style: str
    start: int = 1


class ListCounters:
    """Running counters of every list in a document; `next_label` numbers one paragraph.

    `placeholder` finds the level references in a template: `%1` in Word, `^1` in HWPX (1-based).
    """

    def __init__(self, placeholder: re.Pattern[str]) -> None:
        self._placeholder = placeholder
        self._values: dict[str, dict[int, int]] = {}

    def restart(self, key: str, level: int, value: int) -> None:
        """The next paragraph of list `key` at `level` gets `value`."""
        self._values.setdefault(key, {})[level] = value - 1

    def next_label(self, key: str, level: int, levels: Mapping[int, ListLevel]) -> str:
        """The label of a paragraph at `level` (0-based) of list `key`; deeper levels restart."""
        definition = levels.get(level)
        if definition is None:
            return ""
        values = self._values.setdefault(key, {})
        values[level] = values.get(level, definition.start - 1) + 1
        for deeper in [lvl for lvl in values if lvl > level]:
            del values[deeper]

        def render(match: re.Match[str]) -> str:
            ref = int(match.group(1)) - 1
            ref_level = levels.get(ref)
            if ref_level is None:
                return ""
            return format_number(values.get(ref, ref_level.start), ref_level.style)

        return self._placeholder.sub(render, definition.template)
