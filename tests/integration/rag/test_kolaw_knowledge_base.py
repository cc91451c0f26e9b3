"""The ko-law evaluation corpus: every article indexed, lookups exact (lexical index only, for speed)."""

import re

import pytest

from rag.knowledge.ingest import Ingestor
from rag.knowledge.store import ChunkStore
from rag.models import Message, Role
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.lookup import StructuralLookup
from rag.retrieval.neighbours import NeighbourExpander
from testkit import KOLAW, SHARED_MISSING

pytestmark = [pytest.mark.shared, pytest.mark.skipif(not KOLAW.is_dir(), reason=SHARED_MISSING)]


@pytest.fixture(scope="module")
def kolaw(kiwi_tokenizer, tmp_path_factory):
    store = ChunkStore(tmp_path_factory.mktemp("kolaw") / "index.sqlite")
    report = Ingestor(store, None, kiwi_tokenizer).ingest([KOLAW])
    corpus = IndexedCorpus(store, None, kiwi_tokenizer)
    return report, corpus, StructuralLookup(corpus)


def test_every_statute_ingests_without_errors(kolaw):
    report, _, _ = kolaw
    assert report.failed == []
    assert report.count("added") == len([p for p in KOLAW.glob("*.md") if p.name != "SOURCES.md"])


def test_every_article_heading_of_every_file_is_indexed(kolaw):
    _, corpus, _ = kolaw
    for path in sorted(KOLAW.glob("*.md")):
        if path.name == "SOURCES.md":
            continue
        headings = set(re.findall(r"^#####\s*(제\d+조(?:의\d+)?)", path.read_text(encoding="utf-8"), re.M))
        indexed = {c.article for c in corpus.chunks if c.source_path.endswith(path.name) and c.kind == "article"}
        assert headings - indexed == set(), path.name
        assert len(headings) > 10


def test_branch_articles_are_separate_chunks(kolaw):
    _, corpus, _ = kolaw
    articles = {c.article for c in corpus.chunks if c.doc == "근로기준법"}
    assert {"제43조", "제43조의2", "제43조의3"} <= articles


@pytest.mark.parametrize(("query", "kind", "doc", "target"), [
    ("근로기준법 제60조", "article", "근로기준법", "제60조"),
    ("근로기준법 시행령 제30조", "article", "근로기준법 시행령", "제30조"),
    ("공무원 여비 규정 별표 2", "annex", "공무원 여비 규정", "별표 2"),
    ("근로기준법 제4장", "chapter", "근로기준법", "제4장"),
    ("근기법 60조", "article", "근로기준법", "제60조"),
    ("근로기준법 제6장의2", "chapter", "근로기준법", "제6장의2"),
    ("근로기준법", "overview", "근로기준법", ""),
])
def test_lookups_answer_exactly(kolaw, query, kind, doc, target):
    _, _, lookup = kolaw
    result = lookup.lookup(query)
    assert (result.kind, result.doc, result.target) == (kind, doc, target)
    if kind == "article":
        assert all(c.article == target for c in result.chunks)
        assert "①" in result.chunks[0].text
    if kind == "overview":
        assert any("제60조 연차 유급휴가" in line for line in result.outline)


def test_annex_lookup_answers_with_title_and_link(kolaw):
    _, _, lookup = kolaw
    chunk = lookup.lookup("공무원 여비 규정 별표 2").chunks[0]
    assert "https://" in chunk.text and chunk.title


def test_the_decree_of_a_law_article_is_found_by_the_article_it_cites(kolaw):
    """"시행령에는?" after 근로기준법 제55조: the decree article written "법 제55조제1항에 따른 유급휴일은 …"."""
    _, corpus, _ = kolaw
    lookup = StructuralLookup(corpus, citations=NeighbourExpander(corpus))
    history = [Message(role=Role.ASSISTANT, content="1주에 1회 이상 유급휴일을 줘야 해요. 근로기준법 제55조에 있어요.")]
    resolved = lookup.followup("그럼 시행령에는 어떻게 돼 있어?", history)
    assert resolved is not None and resolved[0] == "근로기준법 시행령 제30조"
    assert "개근" in lookup.lookup(resolved[0]).chunks[0].text
