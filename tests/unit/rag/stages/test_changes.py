"""The "개정 내역" cues (rag/data/changes.yaml), run through the file's own examples and counter-examples, and the
route they give a question before any LLM call."""

from __future__ import annotations

from datetime import datetime

import pytest

from rag.knowledge.versions import ArticleText, ChangeLog, VersionRecord, article_texts
from rag.models import Route, Scope
from rag.stages.changes import ChangeAnswerer, ChangeCues
from rag.stages.enhancer import OfflineQueryEnhancer
from rag.stages.planner import OfflineQueryPlanner
from rag.stages.router import OfflineQueryRouter
from rag.stages.understanding import LlmQueryUnderstander, OfflineQueryUnderstander
from tests.fakes.clock import FakeClock

CUES = ChangeCues()
NOV_28 = datetime(2026, 11, 28, 12).timestamp()


def test_the_cue_file_has_examples_on_both_sides():
    assert CUES.patterns and len(CUES.examples) >= 5 and len(CUES.counter_examples) >= 5


@pytest.mark.parametrize("question", CUES.examples)
def test_a_question_about_what_changed_is_recognised(question):
    assert CUES.asks(question)


@pytest.mark.parametrize("question", CUES.counter_examples)
def test_a_question_that_only_mentions_a_change_is_not(question):
    assert not CUES.asks(question)


@pytest.mark.parametrize("with_cues", [True, False])
async def test_a_change_question_is_a_lookup_caught_before_any_llm_call(samples, scripted_llm, with_cues):
    router = OfflineQueryRouter(samples.lookup, samples.tokenizer, changes=CUES if with_cues else None)
    offline = OfflineQueryUnderstander(enhancer=OfflineQueryEnhancer(), router=router,
                                       planner=OfflineQueryPlanner(samples.tokenizer))
    llm = scripted_llm()  # no reply scripted: a call would fall back offline, and be recorded
    understood = await LlmQueryUnderstander(llm, fallback=offline, lookup=samples.lookup).run("취업규칙 개정 내역", ())
    assert understood.decision.route == (Route.LOOKUP if with_cues else Route.SEARCH)
    assert (llm.requests == []) is with_cues


class FakeVersions:
    """A `VersionSource` holding two versions of 취업규칙 built from the indexed samples."""

    def __init__(self, samples, *, edit, state: str = "in_force", effective: str = "2026-11-01") -> None:
        chunks = [c for c in samples.corpus.chunks if c.doc == "취업규칙"]
        old = tuple(article_texts(chunks))
        common = {"path": "취업규칙.md", "collection": "default", "doc": "취업규칙"}
        self.records = [
            VersionRecord(version=1, effective="2026-03-01", ingested_at="2026-03-01T00:00:00+00:00",
                          state="superseded", articles=old, **common),
            VersionRecord(version=2, effective=effective, ingested_at="2026-11-20T09:00:00+00:00", state=state,
                          articles=tuple(edit(list(old))), **common)]

    def version(self) -> int:
        return 1

    def versions(self, *, amended_only: bool = False) -> list[VersionRecord]:
        return self.records

    def next_pending(self) -> str:
        return next((r.effective for r in self.records if r.state == "pending"), "")


def renumber_and_remove(articles: list[ArticleText]) -> list[ArticleText]:
    """제21조 becomes 제21조의2 (same text), 제23조 (병가) is dropped."""
    out = []
    for a in articles:
        if a.article == "제21조":
            out.append(a.model_copy(update={"article": "제21조의2"}))
        elif a.article != "제23조":
            out.append(a)
    return out


async def answer(samples, source, question="취업규칙 개정 내역", scope=None):
    answerer = ChangeAnswerer(ChangeLog(source), samples.lookup, clock=FakeClock(NOV_28))
    draft, result = await answerer.run(question, scope)
    return draft, result


async def test_a_renumbered_article_and_a_removed_one_are_told_apart(samples):
    draft, result = await answer(samples, FakeVersions(samples, edit=renumber_and_remove))
    lines = draft.text.splitlines()
    assert lines[0] == "**취업규칙 개정 내역**"
    assert "2026-11-01 시행 (버전 1 → 2, 2026-11-20 반영)" in lines
    assert any(line.startswith("• 제21조의2(연차휴가의 사용 촉진) (← 제21조) 조 번호 변경") for line in lines)
    removed = lines.index("• 제23조(병가) 삭제")
    assert lines[removed + 1].startswith("  전: ")
    assert result.kind == "changes" and result.exact


async def test_a_held_change_says_from_when_it_applies(samples):
    def leave(articles):
        return [a.model_copy(update={"text": a.text.replace("15일", "16일")}) if a.article == "제20조" else a
                for a in articles]

    draft, _ = await answer(samples, FakeVersions(samples, edit=leave, state="pending", effective="2027-01-01"))
    assert "2027-01-01부터 시행 예정" in draft.text
    assert "  전: ① 1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다." in draft.text
    assert [(c.doc, c.article) for c in draft.citations] == [("취업규칙", "제20조")]


async def test_a_scope_without_the_collection_hears_of_no_change(samples):
    draft, _ = await answer(samples, FakeVersions(samples, edit=renumber_and_remove), question="최근에 바뀐 규정 있어?",
                            scope=Scope(collections=("law",)))
    assert draft.text == "최근 90일 동안 개정된 규정은 없어요." and draft.citations == ()


async def test_a_named_article_narrows_the_history_to_its_changes(samples):
    source = FakeVersions(samples, edit=renumber_and_remove)
    draft, _ = await answer(samples, source, question="취업규칙 제23조 언제 바뀌었어?")
    assert "• 제23조(병가) 삭제" in draft.text and "제21조의2" not in draft.text
    draft, _ = await answer(samples, source, question="취업규칙 제10조 언제 바뀌었어?")
    assert draft.text == "취업규칙 제10조은(는) 등록된 뒤로 바뀌지 않았어요."
