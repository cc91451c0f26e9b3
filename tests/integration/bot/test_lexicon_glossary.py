"""A deployment adds its own glossary words in REGBOT_DATA_DIR/lexicon/ without editing the package's file."""

from __future__ import annotations

from pathlib import Path

from bot.app import build_components
from tests.testkit import HashingEmbedder, make_settings


def test_a_deployments_glossary_file_adds_words_beside_the_packages(tmp_path: Path, kiwi_tokenizer) -> None:
    lexicon = tmp_path / "lexicon"
    lexicon.mkdir()
    (lexicon / "glossary-site.yaml").write_text(
        "en:\n  - {terms: [hazard bonus], ko: [위험수당], examples: [\"Is there a hazard bonus?\"]}\n",
        encoding="utf-8")

    components = build_components(make_settings(tmp_path), embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer,
                                  dense=False)
    read = components.retriever.analyzer.glossary.read("Do night shifts come with a hazard bonus?")

    assert read.korean_query.split() == ["야간근로", "위험수당"]


def test_a_deployments_filler_words_reach_the_answerability_judge(tmp_path: Path, kiwi_tokenizer) -> None:
    # An organisation's own chatty word ("사내메신저로") is never the subject of a question: the judge reads it as
    # a filler once the deployment's question_core file says so.
    lexicon = tmp_path / "lexicon"
    lexicon.mkdir()
    (lexicon / "question_core-site.yaml").write_text(
        "fillers:\n  - word: 사내메신저\n    examples: [\"사내메신저로 물어봐도 돼? 연차 며칠이야?\"]\n",
        encoding="utf-8")

    components = build_components(make_settings(tmp_path), embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer,
                                  dense=False)
    judge = components.pipeline.stages.grader.judge

    assert "사내메신저" in judge.cues.filler_words
    assert "아무것" in judge.cues.filler_words  # the package's own fillers stay
