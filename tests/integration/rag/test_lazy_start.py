"""An ingest with nothing to do never builds Kiwi (it is most of a command's start-up); a question does."""

import asyncio

from bot.app import build_components
from rag.pipeline import collect
from rag.retrieval.tokenizer import KiwiTokenizer
from testkit import SAMPLES, HashingEmbedder, make_settings


def test_an_unchanged_reingest_never_loads_kiwi_and_a_question_does(tmp_path, kiwi_tokenizer):
    settings = make_settings(tmp_path)
    first = build_components(settings, embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer)
    assert first.ingestor().ingest([SAMPLES]).count("added") > 0

    fresh = KiwiTokenizer(cache_dir=tmp_path)
    again = build_components(settings, embedder=HashingEmbedder(), tokenizer=fresh)
    report = again.ingestor().ingest([SAMPLES])

    assert report.count("added") == 0 and report.count("unchanged") > 0
    assert not fresh.loaded

    answer, _ = asyncio.run(collect(again.pipeline, "연차는 며칠이야?"))
    assert fresh.loaded and answer.citations
