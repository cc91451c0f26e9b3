"""Big files: a per-file size limit with the reason in the report, progress inside a file, and plain text packed
into full chunks instead of one tiny chunk per paragraph."""

from __future__ import annotations

import pytest

from rag.knowledge.chunker import ArticleChunker
from rag.knowledge.ingest import Ingestor
from rag.knowledge.loaders import LoadedDocument
from rag.knowledge.parser import RegulationParser
from rag.knowledge.store import ChunkStore
from rag.retrieval.dense import DenseIndex, open_chroma_client
from testkit import HashingEmbedder

# Our own sentences; a plain memo with no article structure, as a new user might try first.
PARAGRAPH = "출장을 다녀온 직원은 돌아온 날부터 7일 안에 영수증을 붙여 출장비 정산서를 부서장에게 낸다."


def memo(paragraphs: int) -> str:
    return "\n\n".join(f"{n}. {PARAGRAPH}" for n in range(paragraphs))


@pytest.fixture
def ingestor_factory(tmp_path, kiwi_tokenizer):
    def make(**options) -> Ingestor:
        dense = DenseIndex(open_chroma_client(persist_dir=tmp_path / "chroma"), HashingEmbedder())
        return Ingestor(ChunkStore(tmp_path / "index.sqlite"), dense, kiwi_tokenizer, **options)

    return make


class TestSizeLimit:
    def test_a_file_over_the_limit_is_skipped_with_its_size_and_the_limit(self, tmp_path, ingestor_factory):
        big = tmp_path / "big.txt"
        big.write_text(memo(40), encoding="utf-8")
        report = ingestor_factory(max_file_bytes=1_000).ingest([big])
        (outcome,) = report.outcomes
        assert outcome.status == "skipped"
        size_kb = big.stat().st_size / 1_000
        assert outcome.reason == f"too large: {size_kb:.1f} KB, over the limit of 1.0 KB per file"
        assert report.failed == []

    def test_a_file_under_the_limit_is_indexed(self, tmp_path, ingestor_factory):
        small = tmp_path / "small.txt"
        small.write_text(memo(3), encoding="utf-8")
        report = ingestor_factory(max_file_bytes=1_000_000).ingest([small])
        assert [o.status for o in report.outcomes] == ["added"]

    def test_the_limit_must_be_positive(self, ingestor_factory):
        with pytest.raises(ValueError, match="max_file_bytes"):
            ingestor_factory(max_file_bytes=0)


class TestProgressInsideAFile:
    def test_tokenising_and_embedding_report_their_chunks_up_to_the_total(self, tmp_path, ingestor_factory):
        path = tmp_path / "memo.txt"
        path.write_text(memo(400), encoding="utf-8")
        heard: list[tuple[str, str, int, int]] = []
        report = ingestor_factory().ingest([path], file_progress=lambda *event: heard.append(event))
        chunks = report.outcomes[0].chunks
        for phase in ("tokenising", "embedding"):
            events = [e for e in heard if e[1] == phase]
            assert events, f"no {phase} progress"
            assert all(e[0] == "memo.txt" and e[3] == chunks for e in events)
            done = [e[2] for e in events]
            assert done == sorted(done) and done[-1] == chunks


class TestPlainTextChunks:
    def test_short_paragraphs_are_packed_into_chunks_of_the_chunker_size(self):
        text = memo(300)
        loaded = LoadedDocument(path="memo.txt", format="txt", text=text)
        chunks = ArticleChunker(max_chars=700).chunk(RegulationParser().parse(loaded, fallback_name="출장 메모"))
        assert all(len(c.text) <= 700 for c in chunks)
        # One chunk per paragraph would be 300; packed, each chunk holds several.
        assert len(chunks) <= len(text) // 500 + 1
        body = "\n".join(c.text.partition("\n")[2] for c in chunks)
        assert all(f"{n}. {PARAGRAPH}" in body for n in (0, 150, 299))
