"""The company's rules cite the statute they rest on; the fictional sample statute (samples_law/) answers it."""

import pytest

from rag.models import Message, Role, Route
from rag.pipeline import collect
from rag.retrieval.names import DocumentNames
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
