"""Korean script and typography the loaders and name keys must know: Hangul syllables, the marks around and inside
a regulation's name (「」, middle dots), dot leaders of a table of contents, and how a statute's sentence ends."""

from __future__ import annotations

import re

HANGUL_SYLLABLE = re.compile("[\uac00-\ud7a3]")
HANGUL_WORD = re.compile("[\uac00-\ud7a3]+")
# Marks a regulation's name may carry or drop without naming another one: spaces, underscores, 「」『』, quotes and
# the middle dots (ㆍ is the Hangul one, · and ・ its look-alikes).
NAME_MARKS = re.compile(r"[\s_「」『』\"'ㆍ·・]")
# Table-of-contents entries ("제1조(목적) ······ 3"): a dot leader and a page number at the line end.
# Leaders start only at the first dot of a run: started at every dot, a long run was scanned once per dot.
DOT_LEADER_ENTRY = re.compile(r"(?<![.·…‥ㆍ・])(?<![.·…‥ㆍ・]\s)(?:[.·…‥ㆍ・]\s?){4,}\s*\d{1,4}$")
# Between two sentences of a statute ("…한다. 다만, …"): a statute's sentence ends in "다.".
STATUTE_SENTENCE_BREAK = re.compile(r"(?<=다\.)\s+")
