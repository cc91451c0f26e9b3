"""Korean labels that are not regulation text: a document's placeholder titles, the names of table-of-contents
styles, and the role labels of a chat transcript."""

from __future__ import annotations

import re

# Titles an editor fills in for an unnamed file ("문서1", "새 문서", "제목 없음"): no regulation's name.
PLACEHOLDER_TITLE = re.compile(
    r"^(?:untitled|no\s*title|document\s*\d*|noname\s*\d*|문서\s*\d*|새\s*문서\s*\d*|제목\s*없음|제목)$", re.I
)
# Word styles of a table of contents ("TOC 1", "목차 1", "차례").
TOC_STYLE = re.compile(r"^(?:toc|table of contents|목차|차례)", re.I)
# Role labels at a line start ("시스템:", "Assistant:") read to a model like a new turn.
ROLE_LABEL = re.compile(
    r"(?im)^([^\S\n]*)(시스템|system|assistant|user|human|사용자|어시스턴트|developer|개발자)(\s*[:：])"
)
