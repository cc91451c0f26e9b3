"""Kiwi-based tokens for BM25: nouns, verb/adjective stems, numbers with units, foreign words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rag.text import normalize_text

# Tags kept as content tokens (Sejong tag set as Kiwi reports it).
_NOUNS = {"NNG", "NNP", "NR", "SL", "SH", "XR"}
_STEMS = {"VV", "VA", "VV-R", "VA-R", "VV-I", "VA-I"}
# Light verbs and fillers that carry no topic: 하다/되다/있다/없다/어떻다/같다 …
STOP_STEMS = frozenset({
    "하", "되", "있", "없", "어떻", "같", "그렇", "이렇", "저렇", "않", "주", "받", "알", "보", "싶",
    "모르", "지나", "알려주", "말하", "궁금하", "가능하", "괜찮", "맞",
})
# Question words and fillers: they say what is asked, not what it is about.
STOP_NOUNS = frozenset({"것", "수", "등", "때", "경우", "이", "그", "저", "뭐", "무엇", "어디", "언제", "누구", "얼마",
                        "좀", "며칠", "몇", "얼마나", "정도", "거", "건", "게", "혹시", "진짜", "정말"})


class Tokenizer(Protocol):
    def tokens(self, text: str) -> list[str]: ...

    def tokens_many(self, texts: Sequence[str]) -> list[list[str]]: ...


class KiwiTokenizer:
    """Turns Korean text into BM25 tokens.

    Compound nouns are kept whole and split: 연차유급휴가 → 연차, 유급, 휴가, 연차유급휴가 — so both a
    user's "연차" and a title's "연차유급휴가" match. Numbers keep their unit (15일, 8시간).
    """

    def __init__(self, kiwi: object | None = None, *, user_words: Sequence[str] = ()) -> None:
        if kiwi is None:
            from kiwipiepy import Kiwi

            kiwi = Kiwi()
        self.kiwi = kiwi
        for word in user_words:
            self.kiwi.add_user_word(word, "NNG")  # type: ignore[attr-defined]

    def tokens(self, text: str) -> list[str]:
        return self._select(self.kiwi.tokenize(normalize_text(text)))  # type: ignore[attr-defined]

    def tokens_many(self, texts: Sequence[str]) -> list[list[str]]:
        results = self.kiwi.tokenize([normalize_text(t) for t in texts])  # type: ignore[attr-defined]
        return [self._select(r) for r in results]

    @staticmethod
    def _select(morphs: Sequence) -> list[str]:
        out: list[str] = []
        compound: list[str] = []
        compound_end = -1
        previous = None

        def flush() -> None:
            if len(compound) > 1:
                out.append("".join(compound))
            compound.clear()

        for morph in morphs:
            form, tag = morph.form, morph.tag
            adjacent = morph.start == compound_end
            if tag in ("NNG", "NNP"):
                if not adjacent:
                    flush()
                compound.append(form)
                compound_end = morph.start + morph.len
                if form not in STOP_NOUNS:
                    out.append(form)
            else:
                flush()
                compound_end = -1
                if tag in _NOUNS and form not in STOP_NOUNS:
                    out.append(form.lower())
                elif tag in _STEMS and form not in STOP_STEMS:
                    out.append(form + "다")
                elif tag == "NNB" and previous is not None and previous.tag == "SN":
                    out.append(previous.form + form)  # 15 + 일 → 15일
                elif tag == "SN":
                    out.append(form)
            previous = morph
        flush()
        return out
