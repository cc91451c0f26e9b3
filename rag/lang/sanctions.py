"""How a question asks about a sanction and how a statute states one, for retrieval and the answer alike.

Korean statutes put their sanctions in 벌칙/과태료 articles that cite the rule they enforce by number ("제19조제3항을
위반하여 … 3년 이하의 징역 또는 3천만원 이하의 벌금에 처한다"); a question about the sanction names the act, not
the article ("불이익 주면 사장은 어떤 처벌 받아?").
"""

from __future__ import annotations

import re

# The articles that state sanctions ("벌칙", "과태료", "금품 수수 및 공여에 대한 과태료"), not the ones about them
# (양벌규정, "벌칙 적용 시의 공무원 의제", "과태료의 부과기준").
SANCTION_TITLE = re.compile(r"^(?:벌칙|과태료)$|에\s*대한\s*(?:벌칙|과태료)$")
# A provision that states a sanction.
STATES_SANCTION = re.compile(r"징역|벌금|과태료|금고")
