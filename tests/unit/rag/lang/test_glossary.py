"""The bilingual glossary, tested through its own examples: each example's Korean query holds its entry's words."""

from __future__ import annotations

import pytest

from rag.lang import load_glossary
from rag.lang.glossary import GlossaryEntry

GLOSSARY = load_glossary()


def _label(entry: GlossaryEntry) -> str:
    return f"{entry.language}:{entry.terms[0]}"


@pytest.mark.parametrize("entry", GLOSSARY.entries, ids=_label)
def test_each_example_turns_into_a_korean_query_holding_its_entrys_words(entry: GlossaryEntry) -> None:
    for example in entry.examples:
        read = GLOSSARY.read(example)
        assert read.language == entry.language, example
        words = read.korean_query.split()
        assert all(word in words for word in entry.korean), (example, read.korean_query)


def test_glossary_covers_both_languages_broadly() -> None:
    counts = {language: sum(1 for e in GLOSSARY.entries if e.language == language) for language in ("en", "vi")}
    assert counts["en"] >= 140 and counts["vi"] >= 130


def test_the_longest_phrase_wins_over_the_words_inside_it() -> None:
    read = GLOSSARY.read("Is my paid annual leave lost if I quit?")
    assert read.korean_query.split()[:2] == ["연차", "유급휴가"]
    assert "휴가" not in read.korean_query.split()


def test_english_function_words_never_reach_the_korean_query() -> None:
    read = GLOSSARY.read("How many days of annual leave do I get after working one year?")
    assert read.korean_query == "며칠 연차 유급휴가 1년 이상"
    assert read.topics == ("annual paid leave",)


def test_a_possessive_pronoun_is_not_a_workplace_word() -> None:
    # "mine" the pronoun once read as 갱내 (mining): a term that is also a common word needs its phrase.
    assert "갱내" not in GLOSSARY.read("After one full year here, how much paid annual leave is mine?").korean_query
    assert "갱내" in GLOSSARY.read("Can women work in a mine?").korean_query


def test_a_drivers_licence_is_not_the_transport_industry() -> None:
    # A bare "driver" read a driving-licence question as 운수업; the trade keeps its phrases (bus driver, truck driver).
    assert "운수업" not in GLOSSARY.read("Can I swap my driver's license for a Korean one?").korean_query
    assert "운수업" in GLOSSARY.read("Do the hour limits apply to a bus driver?").korean_query


def test_a_fee_outside_the_regulations_is_not_a_pension_fee() -> None:
    # A bare "fee" let an out-of-scope question (a fee the regulations never mention) be answered.
    assert "수수료" not in GLOSSARY.read("How much is the fee to renew my visa?").korean_query
    assert "수수료" in GLOSSARY.read("Who pays the management fees?").korean_query


def test_a_vietnamese_question_typed_without_diacritics_still_matches() -> None:
    assert "퇴직금" in GLOSSARY.read("lam mot nam co duoc tro cap thoi viec khong").korean_query


def test_a_korean_question_has_no_korean_query_of_its_own() -> None:
    read = GLOSSARY.read("연차 며칠이야?")
    assert read.language == "ko" and read.korean_query == ""


def test_a_korean_term_the_asker_names_comes_first_in_the_korean_query() -> None:
    read = GLOSSARY.read("How many days of yeoncha (연차) do I get after one year?")
    assert read.korean_query.split()[0] == "연차"


def test_a_vietnamese_question_typed_plain_around_a_korean_term_still_matches() -> None:
    read = GLOSSARY.read("lam 2 nam roi nghi viec thi duoc toejikgeum (퇴직금) bao nhieu")
    assert read.language == "vi"
    assert read.korean_query.split()[:2] == ["퇴직금", "얼마"]  # "bao nhieu" typed plain reads as "bao nhiêu"


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_question_of_function_words_alone_is_wholly_read(language: str) -> None:
    import yaml

    from rag.lang.glossary import DEFAULT_FUNCTION_WORDS

    for example in yaml.safe_load(DEFAULT_FUNCTION_WORDS.read_text(encoding="utf-8"))[language]["examples"]:
        read = GLOSSARY.read(example)
        assert (read.language, read.unread) == (language, 0.0), example


def test_unread_is_the_share_of_content_words_no_phrase_took() -> None:
    # "annual leave" is read; "use", "hiking" and "trip" are not: 3 of 5 content words unread.
    assert GLOSSARY.read("Can I use annual leave for a hiking trip?").unread == 0.6
    assert GLOSSARY.read("Which bakery sells the best croissants?").unread == 1.0
    assert GLOSSARY.read("연차 며칠이야?").unread == 0.0


def test_the_topical_share_counts_only_words_a_topical_entry_took() -> None:
    # Content words: "day" (of "how many days", which asks for a figure), "annual leave" (a matter), "hiking".
    read = GLOSSARY.read("How many days of annual leave for hiking?")
    assert (read.topical, read.unread) == (0.5, 0.25)
    assert GLOSSARY.read("Which bakery sells the best croissants?").topical == 0.0


@pytest.mark.parametrize("language", ["en", "vi"])
def test_follow_up_cues_fold_their_examples_and_never_their_standalone_questions(language: str) -> None:
    import yaml

    from rag.lang.glossary import DEFAULT_FUNCTION_WORDS

    section = yaml.safe_load(DEFAULT_FUNCTION_WORDS.read_text(encoding="utf-8"))[language]["followup"]
    assert [GLOSSARY.leans_on_history(q) for q in section["examples"]] == [True] * len(section["examples"])
    assert [GLOSSARY.leans_on_history(q) for q in section["standalone"]] == [False] * len(section["standalone"])


def test_a_korean_question_is_left_to_the_korean_follow_up_rule() -> None:
    assert GLOSSARY.leans_on_history("그럼 파트타이머는?") is None
