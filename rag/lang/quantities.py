"""How a question asks for a figure and how a regulation states one, for retrieval and the answer alike.

"며칠 쉴 수 있어?" is answered by a number of days ("14일"), "몇 주는 수업해야 해?" by a number of weeks ("30주"):
the unit asked for is often the only word the question and the answering provision share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.lang.lexicon import where
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

DEFAULT_UNITS = Path(__file__).resolve().parent.parent / "data" / "units.yaml"


class AskedUnit(BaseModel):
    """How a question asks for a number of one unit (`asked`) and how a provision states it (`stated`), with the
    texts each must match and must not (`rag/data/units.yaml`)."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    asked: str
    stated: str
    examples: tuple[str, ...] = Field(min_length=1)
    counter_examples: tuple[str, ...] = ()
    stated_examples: tuple[str, ...] = Field(min_length=1)
    stated_counter_examples: tuple[str, ...] = ()

    @cached_property
    def asked_pattern(self) -> re.Pattern[str]:
        return re.compile(self.asked)

    @cached_property
    def stated_pattern(self) -> re.Pattern[str]:
        return re.compile(self.stated)


def load_units(path: Path = DEFAULT_UNITS) -> tuple[AskedUnit, ...]:
    """The asked-unit table; a bad entry or pattern is a ValueError naming the file and line."""
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    units: list[AskedUnit] = []
    for number, entry in enumerate(data.get("units") or []):
        try:
            unit = AskedUnit.model_validate(entry)
            unit.asked_pattern, unit.stated_pattern  # noqa: B018 - compiled at load: a bad pattern fails at start-up
        except (ValidationError, re.error) as exc:
            raise ValueError(f"{where(path, 'units', number)}: units.{number}: {exc}") from None
        units.append(unit)
    return tuple(units)


# "How many <unit>?" → a number with that unit (package data, read once: the table is part of the language).
ASKED_UNITS = load_units()


def asked_quantities(question: str) -> tuple[re.Pattern[str], ...]:
    """How the figures a question asks for are written ("몇 주는 수업해야 해?" → a number of weeks)."""
    return tuple(unit.stated_pattern for unit in ASKED_UNITS if unit.asked_pattern.search(question))


def numeric_conditions(text: str, pattern: re.Pattern[str]) -> set[tuple[str, str, bool]]:
    """(number, unit, at least?) of each numeric condition in `text` (`ASKED_CONDITION` or `STATED_CONDITION`)."""
    return {(m.group(1), m.group(2), m.group(3) is not None) for m in pattern.finditer(text)}


def with_figure_units(tokens: Iterable[str]) -> set[str]:
    """Tokens plus the units of their figures, for matching question words: "4시간" answers "몇 시간", "3개월"
    answers "몇 개월"."""
    found = set(tokens)
    found.update(t.lstrip("0123456789") for t in found.copy() if t[:1].isdigit())
    return found
