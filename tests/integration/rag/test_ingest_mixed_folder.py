"""A folder of good and bad files: the good ones are indexed and searchable, the bad ones reported."""

import io
import sys
from pathlib import Path

import docx

from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.dense import DenseIndex, open_chroma_client
from rag.retrieval.query import QueryAnalyzer
from rag.retrieval.retriever import HybridRetriever
from testkit import HashingEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "rag" / "knowledge" / "loaders"))
from document_factories import hwpx_paragraph, hwpx_section, make_hwpx, make_pdf


def write_docx(path: Path) -> None:
    document = docx.Document()
    for line in ["출장 지침", "제1조(목적) 이 지침은 해외 출장 절차를 정한다.",
                 "제2조(항공권) 항공권은 출발 14일 전까지 총무팀이 예약한다."]:
        document.add_paragraph(line)
    buffer = io.BytesIO()
    document.save(buffer)
    path.write_bytes(buffer.getvalue())


def build(tmp_path: Path, tokenizer):
    store = ChunkStore(tmp_path / "index" / "index.sqlite")
    dense = DenseIndex(open_chroma_client(persist_dir=tmp_path / "index" / "chroma"), HashingEmbedder())
    return store, dense, Ingestor(store, dense, tokenizer)


def test_good_files_are_indexed_and_bad_ones_reported(tmp_path, kiwi_tokenizer):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "empty.md").write_bytes(b"")
    (folder / "binary.md").write_bytes(bytes(range(256)) * 40)
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\nthis is not a pdf")
    write_docx(folder / "travel.docx")
    (folder / "badge.hwpx").write_bytes(make_hwpx({0: hwpx_section("".join(hwpx_paragraph(t) for t in [
        "출입 지침", "제1조(목적) 이 지침은 사옥 출입 절차를 정한다.", "제2조(출입증) 출입증은 보안팀이 발급한다."]))}))
    (folder / "parking.pdf").write_bytes(make_pdf([["Parking rules", "Article 1 Visitors park on level B2."]]))

    store, dense, ingestor = build(tmp_path, kiwi_tokenizer)
    report = ingestor.ingest([folder])

    by_name = {Path(o.path).name: o for o in report.outcomes}
    assert {n for n, o in by_name.items() if o.status == "failed"} == {"empty.md", "binary.md", "corrupt.pdf"}
    assert all(by_name[n].reason for n in ("empty.md", "binary.md", "corrupt.pdf"))
    assert {n for n, o in by_name.items() if o.status == "added"} == {"travel.docx", "badge.hwpx", "parking.pdf"}

    corpus = IndexedCorpus(store, dense, kiwi_tokenizer)
    retriever = HybridRetriever(corpus, QueryAnalyzer(kiwi_tokenizer))
    assert retriever.search_sync("항공권 예약은 언제까지?", k=3)[0].chunk.article == "제2조"
    assert retriever.search_sync("출입증 발급", k=3)[0].chunk.doc == "badge"  # no title: the file name
    assert any("level B2" in h.chunk.text for h in retriever.search_sync("visitors park", k=3))


def test_a_failed_file_leaves_the_earlier_index_intact(tmp_path, kiwi_tokenizer):
    rules = tmp_path / "rules.md"
    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 4시간 단위로 쓴다.\n", encoding="utf-8")
    store, dense, ingestor = build(tmp_path, kiwi_tokenizer)
    assert ingestor.ingest([rules]).failed == []
    rules.write_bytes(b"\x00\x01\x02 broken")
    report = ingestor.ingest([rules])
    assert [o.status for o in report.outcomes] == ["failed"]
    chunks, _ = store.load()
    assert [c.article for c in chunks] == ["제1조"]
    assert dense.count() == 1


def test_reingest_of_unchanged_files_writes_nothing(tmp_path, kiwi_tokenizer):
    rules = tmp_path / "rules.md"
    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 4시간 단위로 쓴다.\n", encoding="utf-8")
    store, _, ingestor = build(tmp_path, kiwi_tokenizer)
    ingestor.ingest([rules])
    version = store.version()
    report = ingestor.ingest([rules])
    assert [o.status for o in report.outcomes] == ["unchanged"]
    assert store.version() == version


def test_changed_file_replaces_its_chunks_and_prune_removes_deleted_files(tmp_path, kiwi_tokenizer):
    rules = tmp_path / "rules.md"
    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 4시간 단위로 쓴다.\n\n"
                     "##### 제2조 (병가)\n\n병가는 30일.\n", encoding="utf-8")
    store, dense, ingestor = build(tmp_path, kiwi_tokenizer)
    ingestor.ingest([rules])
    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 오전과 오후로 나누어 쓴다.\n", encoding="utf-8")
    report = ingestor.ingest([rules])
    assert report.outcomes[0].status == "updated"
    assert report.outcomes[0].embedded == 1
    chunks, _ = store.load()
    assert [(c.article, "오전과 오후" in c.text) for c in chunks] == [("제1조", True)]
    assert dense.count() == 1
    rules.unlink()
    report = ingestor.ingest([tmp_path], prune=True)
    assert [o.status for o in report.outcomes if o.status == "removed"] == ["removed"]
    assert store.load() == ([], [])
    assert dense.count() == 0


def test_a_truncated_docx_and_a_truncated_hwpx_fail_with_one_clean_line_each(tmp_path, kiwi_tokenizer):
    """A copy cut short (an interrupted download or upload) is reported in one line naming the file; the rest of
    the folder is indexed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    write_docx(folder / "travel.docx")
    (folder / "cut.docx").write_bytes((folder / "travel.docx").read_bytes()[:-300])
    badge = make_hwpx({0: hwpx_section("".join(hwpx_paragraph(t) for t in [
        "출입 지침", "제1조(목적) 이 지침은 사옥 출입 절차를 정한다.", "제2조(출입증) 출입증은 보안팀이 발급한다."]))})
    (folder / "cut.hwpx").write_bytes(badge[: len(badge) // 2])

    _, _, ingestor = build(tmp_path, kiwi_tokenizer)
    report = ingestor.ingest([folder])

    failed = {Path(o.path).name: o.reason for o in report.outcomes if o.status == "failed"}
    assert set(failed) == {"cut.docx", "cut.hwpx"}
    for name, reason in failed.items():
        assert reason.startswith(f"{name}: ") and "\n" not in reason and len(reason) < 200, reason
        assert "Traceback" not in reason and "Error(" not in reason
    assert report.count("added") == 1  # travel.docx
