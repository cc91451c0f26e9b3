"""Which language a question is in — Korean, English or Vietnamese — from its letters alone (no model).

Words are counted, not characters: a Korean question borrows Latin words ("PC 반납은?", "재택 WFH 며칠 돼?",
"IT팀 연락처") and attaches its particles to them ("Slack에서"), so a word holding any Hangul is a Korean word and
a tie goes to Korean; an English question that names a Korean term ("How long is 육아휴직?") still has more Latin
words. Among Latin words, Vietnamese shows itself by its letters (đ ă ơ ư and the stacked tone marks, ạ ả ấ ầ ẩ
… ỹ); a question typed without diacritics by a few common words that are not English.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

Language = Literal["ko", "en", "vi"]
LANGUAGES: tuple[Language, ...] = ("ko", "en", "vi")
FOREIGN: frozenset[str] = frozenset({"en", "vi"})

_WORD = re.compile(r"\S+")
_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
# Letters only Vietnamese uses among the languages we meet: đ ă ơ ư ĩ ũ and the Latin Extended Additional block
# where Vietnamese keeps its vowels with a tone mark (ạ ả ấ … ỹ).
_VIETNAMESE_ONLY = re.compile("[đĐăĂơƠưƯĩĨũŨ\u1ea0-\u1ef9]")
# Accented vowels Vietnamese shares with French or Spanish loanwords ("café", "résumé"): two such words count.
_VIETNAMESE_SHARED = re.compile("[àáâãèéêìíòóôõùúýÀÁÂÃÈÉÊÌÍÒÓÔÕÙÚÝ]")
# Common Vietnamese words as typed without diacritics that are not English words.
_VIETNAMESE_PLAIN = frozenset({
    "toi", "khong", "duoc", "nhieu", "ngay", "nghi", "luong", "viec", "lam", "thang", "cua", "thi", "neu",
    "phai", "bao", "nhu", "nao", "gio", "cong", "hop", "dong", "tien", "chu", "nhan", "vien", "co", "bi", "sao",
    "gi", "mot", "hai", "ba", "nam", "khi", "sau", "truoc", "minh", "em", "anh", "chi",
    "nguoi", "luat", "lao", "thoi", "dung", "cho", "muon", "trong", "lau", "roi", "vay", "nhung", "voi", "cung",
    "chua", "hoi", "biet", "tra", "quy", "dinh", "duoi", "tren", "nhat", "phep", "tuoi", "nuoc", "ngoai",
})


def detect_language(text: str) -> Language:
    """`ko`, `en` or `vi`; Korean unless the Latin words outnumber the Hangul ones (Korean is the default)."""
    text = unicodedata.normalize("NFC", text or "")
    hangul = latin = 0
    vietnamese_only = vietnamese_shared = vietnamese_plain = 0
    for word in _WORD.findall(text):
        if _HANGUL.search(word):
            hangul += 1
        elif _LATIN.search(word):
            latin += 1
            if _VIETNAMESE_ONLY.search(word):
                vietnamese_only += 1
            elif _VIETNAMESE_SHARED.search(word):
                vietnamese_shared += 1
            elif word.strip("?.,!:;()\"'").lower() in _VIETNAMESE_PLAIN:
                vietnamese_plain += 1
    if latin <= hangul:
        return "ko"
    # Typed without diacritics, a third of the words being such common words is Vietnamese (English questions in
    # the tuning sets hold none or one of them; the plain Vietnamese ones, a third to a half).
    if vietnamese_only or vietnamese_shared >= 2 or (vietnamese_plain >= 3 and 3 * vietnamese_plain >= latin):
        return "vi"
    return "en"
