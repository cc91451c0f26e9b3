"""Chunk factories for retrieval tests: small regulations in our own words, indexed in a temporary chunk store."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from rag.knowledge.store import ChunkStore, FileRecord
from rag.models import Chunk
from rag.retrieval.corpus import IndexedCorpus, lexical_tokens


def make_chunk(doc: str = "취업규칙", article: str = "제20조", title: str = "연차휴가",
               body: str = "직원에게 휴가를 준다.", *, part: int = 0, kind: str = "article",
               collection: str = "default", status: str = "시행", deleted: bool = False, audience: str = "",
               effective_date: str = "", domain: str = "") -> Chunk:
    """A chunk as the chunker makes it: the header line, then the body."""
    header = f"{doc} {article}({title})" if title else f"{doc} {article}".strip()
    text = f"{header}\n{body}"
    key = f"{collection}|{doc}|{article}|{part}|{body}"
    return Chunk(chunk_id=hashlib.sha1(key.encode()).hexdigest()[:24], doc=doc, article=article, title=title,
                 text=text, part=part, kind=kind, collection=collection, status=status, deleted=deleted,  # type: ignore[arg-type]
                 audience=audience, effective_date=effective_date, domain=domain,
                 content_hash=hashlib.sha1(text.encode()).hexdigest())


def index_chunks(tmp_path: Path, tokenizer, chunks: Sequence[Chunk], *, dense=None) -> IndexedCorpus:
    """Write `chunks` to a chunk store (one file per document) and load it as a corpus."""
    store = ChunkStore(tmp_path / "index.sqlite")
    by_doc: dict[tuple[str, str], list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault((chunk.collection, chunk.doc), []).append(chunk)
    for (collection, doc), doc_chunks in by_doc.items():
        record = FileRecord(path=f"/regs/{doc}.md", collection=collection, doc=doc, file_hash=doc,
                            chunk_count=len(doc_chunks))
        store.replace_file(record, doc_chunks, lexical_tokens(tokenizer, doc_chunks))
    return IndexedCorpus(store, dense, tokenizer, index_dir=tmp_path / "bm25")


