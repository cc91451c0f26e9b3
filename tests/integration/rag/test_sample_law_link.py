"""The company's rules cite the statute they rest on; the fictional sample statute (samples_law/) answers it."""

import pytest

from rag import messages
from rag.models import AnswerEventKind, Message, Role, Route, Scope, cite_chunk
from rag.pipeline import collect
from rag.retrieval.names import DocumentNames
from rag.stages.legal_basis import CollectionRoles
from testkit import REPO_ROOT, build_sample_components


@pytest.fixture(scope="module")
def with_law(kiwi_tokenizer, tmp_path_factory):
    components = build_sample_components(tmp_path_factory.mktemp("samples-law"), kiwi_tokenizer)
    report = components.ingestor().ingest([REPO_ROOT / "samples_law"], collection="law")
    assert not report.failed, report.failed
    components.corpus.refresh()
    return components


async def test_the_rule_names_the_statute_article_it_rests_on(with_law):
    answer, _ = await collect(with_law.pipeline, "취업규칙 제20조")
    assert "「근로기준법」 제60조" in answer.text


async def test_the_cited_statute_article_is_looked_up_in_the_sample_statute(with_law):
    answer, _ = await collect(with_law.pipeline, "근로기준법 제60조")
    assert answer.route == Route.LOOKUP
    assert answer.citations[0].label == "근로기준법(예시) 제60조"
    assert "15일의 유급휴가" in answer.text


def test_a_real_statute_of_that_name_keeps_the_name():
    names = DocumentNames(["근로기준법(예시)", "근로기준법"])
    assert names.resolve("근로기준법").doc == "근로기준법"
    assert DocumentNames(["근로기준법(예시)"]).resolve("근로기준법").doc == "근로기준법(예시)"


async def test_lookup_follow_up_stays_in_the_rule_although_its_answer_names_the_statute(with_law):
    first, _ = await collect(with_law.pipeline, "취업규칙 제20조")
    history = (Message(role=Role.USER, content="취업규칙 제20조"), Message(role=Role.ASSISTANT, content=first.text))
    answer, _ = await collect(with_law.pipeline, "그럼 21조는?", history=history)
    assert answer.citations[0].label == "취업규칙 제21조"


async def test_an_internal_answer_shows_the_statute_it_rests_on_under_related_law(with_law):
    answer, events = await collect(with_law.pipeline, "연차 며칠이야?")
    assert answer.citations[0].label.startswith("취업규칙 제20조")
    body, related = answer.text.split(messages.RELATED_LAW, 1)
    assert "근로기준법(예시) 제60조" not in body
    law = [c for c in answer.citations if c.doc == "근로기준법(예시)"]
    assert [c.label for c in law] == ["근로기준법(예시) 제60조 제1항"]
    assert f"[{law[0].index}]" in related and "15일의 유급휴가" in related
    streamed = "".join(e.text for e in events if e.kind == AnswerEventKind.DELTA)
    assert messages.RELATED_LAW in streamed


async def test_a_statute_answer_shows_the_internal_rules_that_implement_it(with_law):
    statute = next(c for c in with_law.corpus.chunks if c.doc == "근로기준법(예시)" and c.article == "제60조")
    cited = (cite_chunk(statute, index=1),)
    part = await with_law.pipeline.stages.legal.run("연차 유급휴가는 며칠이야?", cited)
    assert part is not None and part.heading == messages.RELATED_RULES
    assert [c.label.split(" 제")[0] for c in part.citations] == ["취업규칙"]
    assert part.citations[0].index == 2


async def test_a_scope_without_the_law_collection_shows_no_statute(with_law):
    rule = next(c for c in with_law.corpus.chunks if c.doc == "취업규칙" and c.article == "제20조")
    part = await with_law.pipeline.stages.legal.run("연차 며칠이야?", (cite_chunk(rule, index=1),),
                                                    Scope(collections=("default",)))
    assert part is None


def test_collections_are_statutes_by_the_operators_list_or_else_by_name():
    assert CollectionRoles().is_law("law") and CollectionRoles().is_law("국가법령")
    assert not CollectionRoles().is_law("default") and not CollectionRoles().is_law("hr-rules")
    assert CollectionRoles(law=("acts",)).is_law("acts") and not CollectionRoles(law=("acts",)).is_law("law")


async def test_the_demo_question_leads_with_the_answer_after_a_year(with_law):
    # scripts/demo.sh asks this over the samples and the sample statute: the rule for after one year leads.
    answer, _ = await collect(with_law.pipeline, "입사 1년 지나면 연차 며칠 받아?")
    assert "15일" in answer.text.split("\n", 1)[0]
