"""The everyday questions a new user tries first on the bundled samples (samples/ and samples_law/ as `law`, with
the real embedder, as the demo ingests them): the answer's first 200 characters hold the figure asked for, and a
follow-up stays on the earlier answer's rule."""

import pytest

from bot.app import build_components
from rag.models import Message, Role
from rag.pipeline import collect
from testkit import REPO_ROOT, SAMPLES, make_settings

LEAD_CHARS = 200


@pytest.fixture(scope="module")
def demo(kiwi_tokenizer, tmp_path_factory):
    components = build_components(make_settings(tmp_path_factory.mktemp("samples-demo")), tokenizer=kiwi_tokenizer)
    for folder, collection in ((SAMPLES, "default"), (REPO_ROOT / "samples_law", "law")):
        report = components.ingestor().ingest([folder], collection=collection)
        assert not report.failed, report.failed
    components.corpus.refresh()
    return components


async def ask(components, question, *earlier):
    """The answer to `question` after the (question, answer) turns of `earlier` questions, each asked in turn."""
    history: tuple[Message, ...] = ()
    for before in earlier:
        answer, _ = await collect(components.pipeline, before, history=history)
        history += (Message(role=Role.USER, content=before), Message(role=Role.ASSISTANT, content=answer.text))
    answer, _ = await collect(components.pipeline, question, history=history)
    return answer


@pytest.mark.parametrize(("question", "figure"), [
    ("야근하면 수당 더 줘?", "100분의 50"),
    ("야근수당 얼마나 더 줘?", "100분의 50"),
    ("출장 가서 호텔비는 얼마까지 돼?", "8만원"),
])
async def test_an_everyday_question_leads_with_the_figure(demo, question, figure):
    answer = await ask(demo, question)
    assert answer.grounded
    assert figure in answer.text[:LEAD_CHARS], answer.text[:LEAD_CHARS]


async def test_a_follow_up_about_remote_work_stays_on_remote_work(demo):
    answer = await ask(demo, "그럼 일주일에 3일은 안 돼?", "재택근무 해도 돼?")
    assert answer.grounded
    assert "재택근무" in answer.text[:LEAD_CHARS], answer.text[:LEAD_CHARS]
    assert answer.retrieved[0].chunk.title.startswith("유연근무")


async def test_a_follow_up_on_years_of_service_is_answered(demo):
    answer = await ask(demo, "그럼 5년 차는?", "입사 1년 지나면 연차 며칠 받아?")
    assert answer.grounded
    assert "연차" in answer.text[:LEAD_CHARS] or "유급휴가" in answer.text[:LEAD_CHARS], answer.text[:LEAD_CHARS]
