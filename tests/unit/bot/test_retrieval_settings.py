"""Every retrieval knob is reachable from the environment, and the reranker setting picks the reranker."""

import pytest

from bot.app import build_reranker
from bot.config import Settings
from rag.errors import ConfigError
from rag.retrieval.config import RetrievalConfig
from rag.retrieval.rerank import HeuristicReranker


class Corpus:
    def idf(self, token):
        return 1.0


def test_retrieval_settings_come_from_regbot_retrieval_variables(monkeypatch):
    monkeypatch.setenv("REGBOT_RETRIEVAL_DENSE_WEIGHT", "0.25")
    monkeypatch.setenv("REGBOT_RETRIEVAL_FUSION", "rrf")
    monkeypatch.setenv("REGBOT_RETRIEVAL_PROTECT_DEPTH", "5")
    monkeypatch.setenv("REGBOT_PER_QUERY_K", "8")
    settings = Settings()
    config = RetrievalConfig(**settings.retrieval.model_dump())
    assert (config.dense_weight, config.fusion, config.protect_depth) == (0.25, "rrf", 5)
    assert settings.per_query_k == 8


def test_a_bad_retrieval_setting_is_refused(monkeypatch):
    monkeypatch.setenv("REGBOT_RETRIEVAL_RERANKER", "magic")
    with pytest.raises(ValueError):
        Settings()


def test_the_reranker_setting_picks_the_reranker():
    assert isinstance(build_reranker(RetrievalConfig(), Corpus(), None), HeuristicReranker)
    assert build_reranker(RetrievalConfig(reranker="none"), Corpus(), None) is None
    # No LLM configured: the listwise reranker falls back to the heuristic.
    assert isinstance(build_reranker(RetrievalConfig(reranker="llm"), Corpus(), None), HeuristicReranker)


def test_a_cross_encoder_without_weights_says_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="model weights"):
        build_reranker(RetrievalConfig(reranker="cross_encoder", rerank_model=str(tmp_path / "none")), Corpus(), None)
