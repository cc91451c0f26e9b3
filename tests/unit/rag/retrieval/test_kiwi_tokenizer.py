def test_tokenizer_keeps_nouns_and_stems_and_drops_endings(kiwi_tokenizer):
    tokens = kiwi_tokenizer.tokens("연장근로를 하면 수당을 더 받나요?")
    assert "수당" in tokens
    assert "연장" in tokens and "근로" in tokens
    assert not any(t.endswith("나요") for t in tokens)


def test_tokenizer_keeps_compound_nouns_whole_and_split(kiwi_tokenizer):
    tokens = kiwi_tokenizer.tokens("연차유급휴가")
    assert {"연차", "유급", "휴가", "연차유급휴가"} <= set(tokens)


def test_tokenizer_joins_numbers_with_units(kiwi_tokenizer):
    assert "15일" in kiwi_tokenizer.tokens("15일의 휴가")


def test_tokenizer_drops_light_verbs_and_question_words(kiwi_tokenizer):
    tokens = kiwi_tokenizer.tokens("연차는 며칠 있어?")
    assert "있다" not in tokens and "며칠" not in tokens
    assert "연차" in tokens


def test_tokenizer_normalises_nfd_hangul(kiwi_tokenizer):
    import unicodedata

    assert kiwi_tokenizer.tokens(unicodedata.normalize("NFD", "퇴직금 지급")) == kiwi_tokenizer.tokens("퇴직금 지급")


def test_user_dictionary_keeps_slang_whole(kiwi_tokenizer):
    assert "육휴" in kiwi_tokenizer.tokens("육휴 쓰면 월급 나와?")
    assert "이의신청" in kiwi_tokenizer.tokens("이의신청은 언제까지 해?")


def test_user_dictionary_terms_still_yield_their_parts(kiwi_tokenizer):
    tokens = kiwi_tokenizer.tokens("주민번호 수집")
    assert {"주민번호", "주민", "번호"} <= set(tokens)


def test_short_user_words_do_not_swallow_other_words(kiwi_tokenizer):
    assert "연가" not in kiwi_tokenizer.tokens("연간 60일의 범위에서")


def test_explicit_user_words_replace_the_shipped_dictionary_and_their_parts_are_cached(tmp_path):
    from kiwipiepy import Kiwi

    from rag.retrieval.tokenizer import KiwiTokenizer

    first = KiwiTokenizer(Kiwi(load_multi_dict=False), user_words=[("한빛테크연차휴가", "NNP")], cache_dir=tmp_path)
    assert {"한빛테크연차휴가", "연차", "휴가"} <= set(first.tokens("한빛테크연차휴가 신청"))
    assert (tmp_path / "kiwi_user_words.json").exists()
    # A restart reads the parts back instead of analysing the words again (one model build instead of two).
    again = KiwiTokenizer(Kiwi(load_multi_dict=False), user_words=[("한빛테크연차휴가", "NNP")], cache_dir=tmp_path)
    assert again.tokens("한빛테크연차휴가 신청") == first.tokens("한빛테크연차휴가 신청")


def test_repeated_texts_get_the_same_tokens_and_callers_cannot_change_them(kiwi_tokenizer):
    first = kiwi_tokenizer.tokens("연차유급휴가 15일 신청")
    first.append("변경")
    again = kiwi_tokenizer.tokens("연차유급휴가 15일 신청")
    assert again == first[:-1] and "15일" in again
    assert kiwi_tokenizer.tokens_many(["출장 여비", "연차유급휴가 15일 신청"])[1] == again
