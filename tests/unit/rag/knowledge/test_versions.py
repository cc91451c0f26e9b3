"""Versions: the effective date a text names, the article-level changes between two versions, and a held version
put in force on its date."""

from __future__ import annotations

from datetime import datetime

import pytest

from rag.errors import RetrievalUnavailable
from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore, FileRecord
from rag.knowledge.versions import (
    ArticleText,
    VersionRecord,
    article_texts,
    diff_articles,
    effective_date,
    iso_date,
    promote_due_versions,
    word_diff,
)
from rag.models import Chunk
from tests.fakes.clock import FakeClock


def article(label: str, title: str, text: str) -> ArticleText:
    return ArticleText(article=label, title=title, text=text)


LEAVE = article("제20조", "연차유급휴가", "① 1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.\n"
                                     "② 입사 후 1년 미만인 직원에게는 1개월 개근 시 1일의 유급휴가를 준다.")
CONDOLENCE = article("제22조", "경조휴가",
                     "직원 본인이 결혼하는 경우 5일, 배우자의 부모가 사망한 경우 3일의 경조휴가를 준다.")
SICK = article("제23조", "병가", "업무 외 질병으로 일할 수 없는 직원은 연 60일의 범위에서 병가를 받을 수 있다.")


class TestEffectiveDate:
    @pytest.mark.parametrize(("text", "expected"), [
        ("2026-03-01", "2026-03-01"), ("2026.3.1", "2026-03-01"), ("2026년 3월 1일", "2026-03-01"),
        ("20260301", "2026-03-01"), ("곧", ""), ("2026-02-30", ""),
    ])
    def test_iso_date_reads_the_ways_a_date_is_written(self, text, expected):
        assert iso_date(text) == expected

    def test_front_matter_date_wins(self):
        chunks = [Chunk(chunk_id="a", doc="규칙", text="규칙 제1조\n본문", effective_date="2026.11.1"),
                  Chunk(chunk_id="b", doc="규칙", article="부칙", kind="addenda",
                        text="규칙 부칙\n이 규칙은 2027년 1월 1일부터 시행한다.")]
        assert effective_date(chunks) == "2026-11-01"

    def test_without_front_matter_the_last_addenda_says_when_and_a_proviso_does_not(self):
        chunks = [Chunk(chunk_id="a", doc="규칙", article="부칙", kind="addenda",
                        text="규칙 부칙 <2024.3.1>\n이 규칙은 2024년 3월 1일부터 시행한다."),
                  Chunk(chunk_id="b", doc="규칙", article="부칙", kind="addenda",
                        text="규칙 부칙 <2026.3.1>\n이 규칙은 2026년 3월 1일부터 시행한다. 다만, 제5조의 개정규정은 "
                             "2027년 1월 1일부터 시행한다.")]
        assert effective_date(chunks) == "2026-03-01"


class TestDiffArticles:
    def test_an_edited_paragraph_is_a_change_naming_that_paragraph(self):
        edited = article("제20조", "연차유급휴가", LEAVE.text.replace("15일", "16일"))
        [change] = diff_articles([LEAVE, SICK], [edited, SICK])
        assert (change.article, change.change, change.paragraphs) == ("제20조", "changed", ("제1항",))
        assert "15일" in change.before and "16일" in change.after
        assert change.before.startswith("제20조(연차유급휴가)")

    def test_identical_versions_have_no_changes(self):
        assert diff_articles([LEAVE, SICK], [LEAVE, SICK]) == []

    def test_added_and_removed_articles(self):
        changes = diff_articles([LEAVE, SICK], [LEAVE, CONDOLENCE])
        assert [(c.article, c.change) for c in changes] == [("제22조", "added"), ("제23조", "removed")]
        assert changes[0].after.endswith("경조휴가를 준다.") and changes[1].before.endswith("병가를 받을 수 있다.")

    def test_a_renumbered_article_is_matched_by_title_and_text_not_removed_and_added(self):
        new_article = article("제22조", "육아휴가", "만 8세 이하 자녀를 둔 직원에게는 연 2일의 육아휴가를 준다.")
        moved = article("제23조", "경조휴가", CONDOLENCE.text.replace("5일", "7일"))
        moved_sick = article("제24조", "병가", SICK.text)
        changes = diff_articles([LEAVE, CONDOLENCE, SICK], [LEAVE, new_article, moved, moved_sick])
        assert [(c.article, c.change, c.previous_article) for c in changes] == [
            ("제22조", "added", ""), ("제23조", "changed", "제22조"), ("제24조", "changed", "제23조")]
        assert "(← 제22조)" in changes[1].what

    def test_an_article_rewritten_in_place_is_a_change_of_that_article(self):
        rewritten = article("제23조", "병가",
                            "질병이나 부상으로 일할 수 없는 직원에게는 진단서를 받아 유급 병가를 준다.")
        [change] = diff_articles([LEAVE, SICK], [LEAVE, rewritten])
        assert (change.article, change.change) == ("제23조", "changed")


def test_word_diff_marks_only_the_changed_words():
    runs = word_diff("직원에게는 15일의 휴가를 준다.", "직원에게는 16일의 휴가를 준다.")
    assert runs == [("same", "직원에게는"), ("removed", "15일의"), ("added", "16일의"), ("same", "휴가를 준다.")]


class TestHeldVersions:
    """A version ahead of its date waits in the store; on the date it replaces the chunks in force."""

    @staticmethod
    def held_store(tmp_path) -> ChunkStore:
        store = ChunkStore(tmp_path / "index.sqlite")
        old = [Chunk(chunk_id="a", doc="규칙", article="제1조", text="규칙 제1조\n휴가는 15일이다.")]
        record = FileRecord(path="/r.md", collection="default", doc="규칙", file_hash="h1", chunk_count=1)
        first = VersionRecord(path="/r.md", collection="default", version=1, doc="규칙",
                              articles=tuple(article_texts(old)))
        store.replace_file(record, old, [["휴가"]], version=first)
        new = [Chunk(chunk_id="a", doc="규칙", article="제1조", text="규칙 제1조\n휴가는 16일이다.")]
        store.hold_version("h2", first.model_copy(update={"version": 2, "effective": "2027-01-01",
                                                          "articles": tuple(article_texts(new))}), new, [["휴가"]])
        return store

    def test_a_held_version_is_promoted_on_its_date_with_its_vectors(self, tmp_path):
        store = self.held_store(tmp_path)
        dense = RecordingDense()
        assert promote_due_versions(store, dense, "2026-12-31") == []
        assert store.load()[0][0].text.endswith("15일이다.")
        [promoted] = promote_due_versions(store, dense, "2027-01-01")
        assert promoted.version == 2 and [c.text for c in dense.upserted] == ["규칙 제1조\n휴가는 16일이다."]
        assert store.load()[0][0].text.endswith("16일이다.")
        assert [v.state for v in store.versions()] == ["superseded", "in_force"]

    def test_an_unreachable_dense_index_keeps_it_held_and_the_ingest_going(self, tmp_path):
        store = self.held_store(tmp_path)
        clock = FakeClock(datetime(2027, 1, 2, 12).timestamp())
        report = Ingestor(store, UnreachableDense(), WhitespaceTokenizer(), clock=clock).ingest([])
        assert report.outcomes == []
        assert [v.state for v in store.versions()] == ["in_force", "pending"]
        assert store.load()[0][0].text.endswith("15일이다.")


class RecordingDense:
    def __init__(self) -> None:
        self.upserted: list[Chunk] = []
        self.deleted: list[str] = []

    def upsert(self, chunks) -> None:
        self.upserted.extend(chunks)

    def delete(self, ids) -> None:
        self.deleted.extend(ids)


class UnreachableDense(RecordingDense):
    def upsert(self, chunks) -> None:
        raise RetrievalUnavailable("Chroma is not reachable: ConnectError")


class WhitespaceTokenizer:
    def tokens(self, text: str) -> list[str]:
        return text.split()

    def tokens_many(self, texts):
        return [t.split() for t in texts]
