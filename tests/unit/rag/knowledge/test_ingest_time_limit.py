"""A crafted file cannot hang an ingest (issue 28): the HTML sniff is linear, and a per-file time limit skips a
file whose reading runs too long with "took too long" in the report while the rest are indexed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from rag.knowledge.ingest import Ingestor
from rag.knowledge.loaders import LoaderRegistry
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.markdown import MarkdownLoader
from rag.knowledge.store import ChunkStore

RULE = "# 출장 규정\n\n제1조(목적) 이 규정은 출장비 정산 절차를 정한다.\n"


class StuckLoader(MarkdownLoader):
    """Reads `.stuck` files forever, as a pathological regex or parser would."""

    format = "stuck"
    extensions = (".stuck",)

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"stuck")

    def load(self, path: Path) -> LoadedDocument:
        threading.Event().wait()  # never returns: only killing the reader ends it
        raise AssertionError("unreachable")


@pytest.fixture
def ingestor_factory(tmp_path, kiwi_tokenizer):
    def make(**options) -> Ingestor:
        return Ingestor(ChunkStore(tmp_path / "index.sqlite"), None, kiwi_tokenizer, **options)

    return make


def test_thirty_empty_html_comments_ingest_in_seconds(tmp_path, ingestor_factory) -> None:
    crafted = tmp_path / "crafted.md"
    crafted.write_text("<!---->" * 30 + "\n" + RULE, encoding="utf-8")

    started = time.perf_counter()
    report = ingestor_factory().ingest([crafted])

    assert time.perf_counter() - started < 10  # was 23 s for 26 comments, ×4 for each two more
    assert [o.status for o in report.outcomes] == ["added"]


def test_a_file_that_takes_too_long_is_skipped_and_the_rest_indexed(tmp_path, ingestor_factory) -> None:
    stuck = tmp_path / "a.stuck"
    stuck.write_text("stuck forever", encoding="utf-8")
    fine = tmp_path / "b.md"
    fine.write_text(RULE, encoding="utf-8")
    loaders = LoaderRegistry([StuckLoader(), MarkdownLoader()])

    report = ingestor_factory(loaders=loaders, file_time_limit_s=2).ingest([stuck, fine])

    by_name = {Path(o.path).name: o for o in report.outcomes}
    assert by_name["a.stuck"].status == "skipped", by_name["a.stuck"].reason
    assert by_name["a.stuck"].reason.startswith("took too long")
    assert by_name["b.md"].status == "added"
    assert report.failed == []


def test_with_a_time_limit_files_are_read_as_without_one(tmp_path, ingestor_factory, kiwi_tokenizer) -> None:
    path = tmp_path / "rule.md"
    path.write_text(RULE, encoding="utf-8")

    timed = ingestor_factory(file_time_limit_s=30).ingest([path])
    plain = Ingestor(ChunkStore(tmp_path / "other.sqlite"), None, kiwi_tokenizer).ingest([path])

    def summary(report) -> list[tuple]:
        return [(o.status, o.doc, o.chunks) for o in report.outcomes]

    assert summary(timed) == summary(plain)
