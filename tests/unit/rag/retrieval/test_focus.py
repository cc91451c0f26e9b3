"""Whether a follow-up has moved on from the article the previous reply cited (rag/retrieval/focus.py)."""

from __future__ import annotations

from retrieval_samples import make_chunk

from rag.models import Hit
from rag.retrieval.focus import FollowupFocus


def hit(article: str, score: float) -> Hit:
    return Hit(chunk=make_chunk("근로기준법", article, "제목", "본문"), score=score)


CITED = {("근로기준법", "제60조")}


def test_the_cited_article_well_behind_the_own_words_best_means_moved_on():
    assert FollowupFocus(0.8).moved_on([hit("제56조", 1.0), hit("제60조", 0.7)], CITED)


def test_the_cited_article_close_to_the_best_or_first_is_the_same_matter():
    focus = FollowupFocus(0.8)
    assert not focus.moved_on([hit("제56조", 1.0), hit("제60조", 0.85)], CITED)
    assert not focus.moved_on([hit("제60조", 1.0), hit("제56조", 0.9)], CITED)


def test_the_cited_article_missing_from_the_own_words_ranking_means_moved_on():
    assert FollowupFocus(0.8).moved_on([hit("제56조", 1.0)], CITED)


def test_nothing_ranked_or_nothing_cited_is_never_moved_on():
    focus = FollowupFocus(0.8)
    assert not focus.moved_on([], CITED)
    assert not focus.moved_on([hit("제56조", 1.0)], set())
    assert not focus.moved_on([hit("제56조", 0.0)], CITED)
