"""Structural lookups answer by exact reference, never by search: abbreviations, decrees, whole texts, forms."""

import pytest
from retrieval_samples import index_chunks, make_chunk

from rag.models import Hit, Message, Role
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.neighbours import NeighbourExpander
from rag.stages.followups import MAX_CHARS, OfflineFollowupSuggester, about_articles
from rag.stages.structural import FULLTEXT_PAGE_CHARS, StructuralAnswerer


@pytest.fixture
def lookup(rules_corpus):
    return StructuralLookup(rules_corpus)


@pytest.mark.parametrize("query, doc, target", [
    ("근기법 60조", "근로기준법", "제60조"),
    ("근로기준법 시행령 제26조", "근로기준법 시행령", "제26조"),
    ("근기법 시행령 26조", "근로기준법 시행령", "제26조"),
    ("근로기준법시행령 제26조 보여줘", "근로기준법 시행령", "제26조"),
    ("복무규정 제15조", "국가공무원 복무규정", "제15조"),
    # a correction: what the user corrected the reference to
    ("근로기준법 말고 근로기준법 시행령 제26조 보여줘", "근로기준법 시행령", "제26조"),
    ("근기법 아니고 복무규정 15조", "국가공무원 복무규정", "제15조"),
    # a correction of the article keeps the regulation it named
    ("근로기준법 제60조 말고 제50조", "근로기준법", "제50조"),
    ("근기법 60조 아니고 23조 보여줘", "근로기준법", "제23조"),
])
def test_abbreviations_and_decrees_resolve_to_the_exact_article(lookup, query, doc, target):
    assert lookup.parse(query) is not None
    result = lookup.lookup(query)
    assert (result.kind, result.doc, result.target) == ("article", doc, target)


async def test_the_decree_of_a_law_whose_decree_is_not_indexed_is_not_the_law(lookup):
    assert lookup.parse("국가공무원 복무규정 시행규칙 제3조") is not None
    draft, result = await StructuralAnswerer(lookup).run("국가공무원 복무규정 시행규칙 제3조")
    assert result.kind == "not_found"
    assert draft.text.startswith("「국가공무원 복무규정」의 시행규칙은 등록된 규정에 없어요")
    assert draft.followups == ("국가공무원 복무규정 목차",)


def test_a_form_number_is_a_reference(lookup):
    result = lookup.lookup("근로기준법 서식 2")
    assert (result.kind, result.target) == ("not_found", "별지 2")


async def test_the_whole_text_is_paged_for_chat(rules_corpus, lookup):
    draft, result = await StructuralAnswerer(lookup).run("근로기준법 전문")
    assert result.kind == "fulltext"
    assert "제50조" in draft.text and "제23조" in draft.text
    assert len(draft.text) < FULLTEXT_PAGE_CHARS + 300
    assert draft.citations[0].doc == "근로기준법"


def test_a_page_number_after_the_whole_text_is_kept(lookup):
    assert lookup.lookup("근로기준법 전문 2쪽").page == 2


@pytest.mark.parametrize("query", ["근로기준법 제60조는?", "근기법 제23조가 뭐야?",
                                   "근로기준법 제23조에 뭐라고 나와 있어?", "근로기준법 제23조 무슨 내용이야?",
                                   "근기법 60조는 어떤 조항이에요?", "근로기준법 제23조 조문 그대로 보여줘",
                                   "근기법 60조 전체 보여줄래?", "근로기준법 제23조 좀 보여주실 수 있나요?"])
def test_a_reference_asked_as_a_question_is_still_a_lookup(lookup, query):
    assert lookup.parse(query) is not None
    assert lookup.lookup(query).kind == "article"


@pytest.mark.parametrize("query", ["근로기준법 제4장에는 어떤 조문들 있어?", "근로기준법 제4장엔 뭐뭐 들어있어?",
                                   "근로기준법 제4장에 무슨 내용이 있나요?"])
def test_what_a_chapter_holds_is_a_chapter_lookup(lookup, query):
    assert lookup.parse(query) is not None
    assert lookup.lookup(query).target == "제4장"


def test_a_question_that_only_cites_an_article_is_not_a_lookup(lookup):
    assert lookup.parse("근로기준법 제60조에 따르면 연차는 며칠이야?") is None


@pytest.mark.parametrize("query", ["근로기준법 제999조", "근기법 제9장", "국가공무원 복무규정 시행규칙 제3조"])
def test_a_complete_reference_to_something_missing_is_answered_not_found_not_searched(lookup, query):
    result = lookup.lookup(query)
    assert (result.kind, result.exact) == ("not_found", True)


def test_a_reference_to_a_regulation_not_indexed_is_answered_not_searched(lookup):
    result = lookup.lookup("없는규정 제3조")
    assert (result.kind, result.exact, result.unindexed, result.doc) == ("not_found", True, True, "없는규정")


def test_an_unknown_name_not_shaped_like_a_regulation_may_still_be_searched(lookup):
    assert lookup.lookup("야근수당 제3조").exact is False


@pytest.fixture
def two_rulebooks(tmp_path, kiwi_tokenizer, workplace_rules):
    """근로기준법 and its 시행령 both hold a 제23조: the shared name "근로기준" cannot choose between them."""
    extra = make_chunk("근로기준법 시행령", "제23조", "해고의 예고", "해고를 예고할 때에는 서면으로 한다.")
    return StructuralLookup(index_chunks(tmp_path, kiwi_tokenizer, [*workplace_rules, extra]))


def test_a_shared_name_resolves_to_the_one_regulation_holding_the_article(two_rulebooks):
    result = two_rulebooks.lookup("근로기준 제46조")  # only the law has 제46조
    assert (result.kind, result.doc, result.target) == ("article", "근로기준법", "제46조")


async def test_a_shared_name_with_the_article_in_several_offers_each_as_a_choice_not_a_search(two_rulebooks):
    draft, result = await StructuralAnswerer(two_rulebooks).run("근로기준 제23조")
    assert (result.kind, result.exact) == ("ambiguous", True)
    assert set(draft.followups) == {"근로기준법 제23조", "근로기준법 시행령 제23조"}
    assert all(two_rulebooks.lookup(choice).kind == "article" for choice in draft.followups)


def test_a_shared_name_whose_article_nobody_holds_stays_ambiguous_and_may_be_searched(two_rulebooks):
    result = two_rulebooks.lookup("근로기준 제999조")
    assert (result.kind, result.exact) == ("ambiguous", False)


@pytest.mark.parametrize("query", ["국가공무원 복무규정 전체를 요약해 줄래?", "근기법 목차 보여줘", "근로기준법 개요"])
def test_a_summary_of_a_whole_regulation_is_its_outline(lookup, query):
    assert lookup.parse(query) is not None
    assert lookup.lookup(query).kind == "overview"


def test_a_question_about_a_regulation_is_not_its_outline(lookup):
    assert lookup.parse("근로기준법 위반하면 어떻게 돼?") is None


def test_an_offline_follow_up_button_opens_the_article_it_names(lookup):
    # The offline suggester words its buttons "<regulation> <article>(<title>)에 대해 알려줘".
    from rag.stages.followups import ABOUT_ARTICLE

    query = ABOUT_ARTICLE.format(doc="근로기준법", article="제46조", title="휴업수당")
    assert lookup.parse(query) is not None
    result = lookup.lookup(query)
    assert (result.kind, result.doc, result.target) == ("article", "근로기준법", "제46조")


def test_a_follow_up_button_for_a_foreign_question_is_the_bare_reference_and_opens_it(lookup):
    from rag.lang import detect_language
    from rag.stages.followups import REFERENCE_ONLY

    query = REFERENCE_ONLY.format(doc="근로기준법", article="제46조", title="휴업수당")
    assert detect_language(query) == "ko"  # tapped, it is a lookup by reference, not a foreign question
    result = lookup.lookup(query)
    assert (result.kind, result.doc, result.target) == ("article", "근로기준법", "제46조")


@pytest.mark.parametrize("question", ["How much is overtime pay?", "Làm thêm giờ được trả bao nhiêu?"])
def test_a_foreign_question_gets_follow_up_buttons_without_a_korean_sentence(question):
    chunk = make_chunk(doc="근로기준법", article="제56조", title="연장 근로")
    assert about_articles(question, [chunk]) == ("근로기준법 제56조(연장 근로)",)


@pytest.mark.parametrize(("query", "kind", "doc", "candidates"), [
    ("제50조", "article", "근로기준법", ()),  # one regulation holds it: that article
    ("26조 보여줘", "ambiguous", "", ("국가공무원 복무규정", "근로기준법 시행령")),  # several: the choice
    ("제999조", "not_found", "", ()),  # none: said so, not searched
])
def test_an_article_without_a_regulation_is_looked_up_in_every_regulation(lookup, query, kind, doc, candidates):
    assert lookup.names_no_regulation(query)
    result = lookup.lookup(query)
    assert (result.kind, result.doc, tuple(sorted(result.candidates))) == (kind, doc, candidates)
    assert result.exact or kind == "article"


def test_a_question_that_cites_an_article_without_a_regulation_is_not_a_bare_reference(lookup):
    assert not lookup.names_no_regulation("제60조에 따르면 연차는 며칠이야?")
    assert not lookup.names_no_regulation("근로기준법 제60조")  # names its regulation: `parse` has it


@pytest.mark.parametrize("query", ["근로기준법 제50조랑 제60조 보여줘", "근기법 50조, 60조",
                                   "근로기준법 제50조 및 제60조는?"])
async def test_several_articles_of_one_regulation_are_shown_in_turn_each_cited(lookup, query):
    draft, result = await StructuralAnswerer(lookup).run(query)
    assert (result.kind, result.doc, result.target) == ("articles", "근로기준법", "제50조, 제60조")
    assert [c.label for c in draft.citations] == ["근로기준법 제50조", "근로기준법 제60조"]
    assert draft.text.index("**근로기준법 제50조") < draft.text.index("**근로기준법 제60조")


async def test_a_listed_article_that_does_not_exist_is_named(lookup):
    draft, _ = await StructuralAnswerer(lookup).run("근로기준법 제50조랑 제999조")
    assert [c.label for c in draft.citations] == ["근로기준법 제50조"]
    assert "제999조는 「근로기준법」에서 찾지 못했어요" in draft.text
    assert lookup.lookup("근로기준법 제998조랑 제999조").kind == "not_found"


def test_a_question_with_a_correction_in_it_is_not_a_reference(lookup):
    assert lookup.parse("연차 말고 병가는 며칠이야?") is None


@pytest.mark.parametrize(("earlier", "question", "reference"), [
    # The decree's articles that cite the article the conversation was about ("법 제46조제1항에 따라 …").
    ("휴업수당은 평균임금의 100분의 70 이상이에요. 근로기준법 제46조에 있어요.", "그럼 시행령에는 어떻게 돼 있어?",
     "근로기준법 시행령 제26조"),
    ("근로기준법 제46조에 따라 휴업수당을 받아요.", "그럼 시행령은?", "근로기준법 시행령 제26조"),
    # No decree article cites it: the decree's outline.
    ("1주 40시간이에요. 근로기준법 제50조에 있어요.", "시행령도 있어?", "근로기준법 시행령"),
])
def test_a_decree_asked_after_a_law_is_looked_up_where_it_implements_that_article(tmp_path, kiwi_tokenizer,
                                                                                 workplace_rules, question, earlier,
                                                                                 reference):
    addenda = make_chunk("근로기준법 시행령", "부칙", "", "이 영은 공포한 날부터 시행한다. 법 제46조의 개정규정은 …",
                         kind="addenda")
    corpus = index_chunks(tmp_path, kiwi_tokenizer, [*workplace_rules, addenda])  # 부칙 cites too: no article
    lookup = StructuralLookup(corpus, citations=NeighbourExpander(corpus))
    history = [Message(role=Role.USER, content="이거 법에 어떻게 돼 있어?"),
               Message(role=Role.ASSISTANT, content=earlier)]
    resolved = lookup.followup(question, history)
    assert resolved is not None and resolved[0] == reference
    result = lookup.lookup(reference)
    assert result.doc == "근로기준법 시행령" and result.kind in ("article", "overview")


def test_a_decree_that_is_not_indexed_is_not_a_lookup(rules_corpus):
    history = [Message(role=Role.ASSISTANT, content="국가공무원 복무규정 제15조에 따라 21일이에요.")]
    assert StructuralLookup(rules_corpus).followup("그럼 시행령에는 어떻게 돼 있어?", history) is None
    assert StructuralLookup(rules_corpus).followup("시행령에 연가 가산 얘기도 있어?", history) is None


async def test_an_answer_from_a_law_article_offers_the_decree_article_that_implements_it(rules_corpus):
    by_label = {c.label: c for c in rules_corpus.chunks}
    hits = [Hit(chunk=by_label[label], score=1.0) for label in ("근로기준법 제46조", "근로기준법 제50조")]
    cited = {hits[0].chunk.chunk_id}
    offered = await OfflineFollowupSuggester(NeighbourExpander(rules_corpus)).run("휴업수당은 얼마야?", hits, cited)
    assert offered[0] == "근로기준법 시행령 제26조(휴업수당의 산출)에 대해 알려줘"  # a button that looks it up
    assert StructuralLookup(rules_corpus).parse(offered[0]) is not None
    without = await OfflineFollowupSuggester().run("휴업수당은 얼마야?", hits, cited)
    assert without == ("근로기준법 제50조(근로시간)에 대해 알려줘",)


async def test_a_law_article_looked_up_offers_the_decree_articles_that_implement_it(rules_corpus):
    answerer = StructuralAnswerer(StructuralLookup(rules_corpus, citations=NeighbourExpander(rules_corpus)))
    draft, _ = await answerer.run("근로기준법 제46조")
    assert draft.followups == ("근로기준법 시행령 제26조(휴업수당의 산출)에 대해 알려줘",)
    draft, _ = await answerer.run("근로기준법 제50조")  # no decree article cites it
    assert draft.followups == ()


async def test_an_article_button_with_a_long_title_is_still_a_lookup(rules_corpus):
    long_title = "근로시간과 휴게시간의 산정 및 그 밖에 근로시간에 관하여 필요한 세부 사항의 기준"
    chunk = make_chunk("근로기준법", "제50조", long_title, "1주간의 근로시간은 40시간을 초과할 수 없다.")
    (button,) = about_articles("야근 수당은?", [chunk])
    assert len(button) <= MAX_CHARS and StructuralLookup(rules_corpus).lookup(button).target == "제50조"
