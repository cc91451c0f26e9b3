"""Framing strings: every Korean string of rag/messages.py has an English and a Vietnamese counterpart."""

from __future__ import annotations

import string

import pytest

from rag import messages
from rag.lang import framing_for
from rag.lang.framing import ENGLISH, KOREAN, VIETNAMESE

KOREAN_KEYS = sorted(k for k, v in vars(messages).items() if k.isupper() and isinstance(v, str))


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("language", ["en", "vi"])
def test_every_korean_framing_key_has_a_counterpart_with_the_same_placeholders(language: str) -> None:
    framing = framing_for(language)
    missing = [k for k in KOREAN_KEYS if k not in framing.keys()]
    assert not missing, f"{language} lacks {missing}: add them to rag/lang/framing.py"
    differing = [k for k in KOREAN_KEYS if _fields(getattr(framing, k)) != _fields(KOREAN[k])]
    assert not differing, f"{language} placeholders differ from Korean in {differing}"


@pytest.mark.parametrize("language", ["en", "vi"])
def test_foreign_framing_holds_no_korean_outside_quoted_names(language: str) -> None:
    # Only a reference the user may type back ("전문 3쪽") keeps Korean words; the rest is the asker's language.
    strings = ENGLISH if language == "en" else VIETNAMESE
    korean = [k for k, v in strings.items() if any("가" <= c <= "힣" for c in v) and "전문" not in v]
    assert not korean


def test_unknown_language_falls_back_to_korean() -> None:
    assert framing_for("fr").NOT_FOUND == messages.NOT_FOUND
    assert framing_for("en").NOT_FOUND.startswith("I could not find")


def test_an_adapters_label_set_refuses_a_language_missing_a_label() -> None:
    from rag.lang import label_set

    with pytest.raises(ValueError, match="en differ from the Korean ones: SHARE"):
        label_set({"UP": "👍 도움이 됐어요", "SHARE": "공유"}, {"UP": "👍 Helpful"},
                  {"UP": "👍 Hữu ích", "SHARE": "Chia sẻ"})

