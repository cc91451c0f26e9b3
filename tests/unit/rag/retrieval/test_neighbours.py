from __future__ import annotations

from retrieval_samples import index_chunks, make_chunk

from rag.models import Hit
from rag.retrieval.neighbours import NeighbourExpander


def labels(hits):
    return [f"{h.chunk.doc} {h.chunk.article} {h.chunk.part}" for h in hits]


def build(tmp_path, kiwi_tokenizer):
    chunks = [
        make_chunk("근로기준법", "제46조", "휴업수당", "① 평균임금의 100분의 70 이상을 준다.", part=0),
        make_chunk("근로기준법", "제46조", "휴업수당", "② 노동위원회의 승인을 받으면 덜 줄 수 있다.", part=1),
        make_chunk("근로기준법", "제2조", "정의",
                   "평균임금이란 3개월 동안의 임금 총액을 그 기간의 총일수로 나눈 금액이다."),
        make_chunk("근로기준법 시행령", "제26조", "휴업수당의 산출",
                   "법 제46조제1항에 따라 산출하며, 제2조의 평균임금을 쓴다."),
        make_chunk("근로기준법 시행령", "제2조", "평균임금", "시행령의 평균임금 규정."),
        make_chunk("최저임금법", "제6조", "효력", "「근로기준법」 제2조의 임금을 말한다. 「다른법」 제9조와 같다."),
    ]
    corpus = index_chunks(tmp_path, kiwi_tokenizer, chunks)
    return corpus, NeighbourExpander(corpus, aliases={})


def hit_of(corpus, doc, article, part=0):
    chunk = next(c for c in corpus.chunks if c.doc == doc and c.article == article and c.part == part)
    return Hit(chunk=chunk, score=1.0)


def test_other_parts_of_an_article_follow_the_hit(tmp_path, kiwi_tokenizer):
    corpus, expander = build(tmp_path, kiwi_tokenizer)
    expanded = expander.expand([hit_of(corpus, "근로기준법", "제46조", 1)], citations=False)
    assert labels(expanded) == ["근로기준법 제46조 1", "근로기준법 제46조 0"]
    assert expanded[1].score < expanded[0].score
    assert expanded[1].ranks == {"article_part": 1}


def test_a_decree_citing_the_act_brings_the_acts_article(tmp_path, kiwi_tokenizer):
    corpus, expander = build(tmp_path, kiwi_tokenizer)
    cited = expander.cited_by(hit_of(corpus, "근로기준법 시행령", "제26조").chunk)
    assert [f"{c.doc} {c.article}" for c in cited] == ["근로기준법 제46조", "근로기준법 시행령 제2조"]


def test_a_named_law_is_resolved_and_unknown_laws_are_skipped(tmp_path, kiwi_tokenizer):
    corpus, expander = build(tmp_path, kiwi_tokenizer)
    cited = expander.cited_by(hit_of(corpus, "최저임금법", "제6조").chunk)
    assert [f"{c.doc} {c.article}" for c in cited] == ["근로기준법 제2조"]


def test_expansion_is_bounded_and_skips_what_is_already_there(tmp_path, kiwi_tokenizer):
    corpus, expander = build(tmp_path, kiwi_tokenizer)
    start = [hit_of(corpus, "근로기준법 시행령", "제26조"), hit_of(corpus, "근로기준법", "제46조", 0)]
    expanded = expander.expand(start, max_added=1)
    assert labels(expanded) == ["근로기준법 시행령 제26조 0", "근로기준법 제46조 0", "근로기준법 제46조 1"]
