"""How the sentences of a Korean provision read, and the heading an answer's follow-up block may wear.

The offline answer quotes sentences, so it must know where a provision's sentence ends ("…한다." but not the
"다." that opens a 목 item), what a proviso is ("다만, …"), which sentence announces a list ("다음 각 호의"), how
a definition, a limit and an amendment note are worded. Every pattern is linear on untrusted text (bounded or
anchored at a blank run's start): tests/unit/test_regex_worst_cases.py runs them.
"""

from __future__ import annotations

import re

# Amendment notes inside an article (<개정 2020. 1. 1.>, <신설 …>): history, not content to quote.
AMENDMENT_NOTE = re.compile(r"(?<!\s)\s*+<(개정|신설)[^<>]*>")  # from a blank run's start: linear
# Statutes define with "“X”란 … 말한다".
DEFINITION = re.compile(r"(이)?란\s.{0,400}?(말한다|뜻한다)")  # bounded: `.*` rescanned the line per 란
# The term a definition defines: "“임금”이란", "\"근로자\"란" (a bounded quoted run: linear).
DEFINED_TERM = re.compile(r'["“]([^"”\n]{1,30})["”]\s*(?:이)?란\s')
# A limit stated: "초과할 수 없다", "이하" ….
STATES_LIMIT = re.compile(r"초과할\s*수\s*없|초과하지\s*못|넘지\s*못|한도로|이하|이내")
# The proviso of a provision ("…할 수 있다. 다만, …"); group 1 reads it on its own, without its "다만,".
PROVISO = re.compile(r"(?:^|(?<!\s)\s+)다만,\s*(.{1,500}?다\.)")  # bounded and from a blank run's start
# The words that open a proviso or its elaboration: such a piece reads with the sentence before it.
PROVISO_OPENERS = ("다만", "이 경우")
# An item of a 호 (1., 2의2.) or 목 (가., 나.) list.
ITEM_START = re.compile(r"^\s*(\d+(의\d+)?|[가-하])\.\s")
# "…한다." ends a sentence; "다." opening a line is the third item of a 목 list (가. 나. 다.), not an ending.
SENTENCE_END = re.compile(r"(?<=\S다\.)\s+|\n+")
# A sentence that announces a list ("다음 각 호의 …", "다음과 같다") is read together with its first items.
ANNOUNCES_ITEMS = re.compile(r"다음\s*각\s*(호|목)|다음과\s*같")

# The follow-up block's heading when the answer's model dressed its marker up (bold, a colon, no angle brackets).
LOOSE_FOLLOWUP_HEADING = re.compile(r"\n[ \t*#]*<?후속\s?질문>?[ \t*:]*\n")
