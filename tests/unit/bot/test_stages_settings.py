"""REGBOT_STAGES_*: the stage knobs, joined with the older settings that reach the stages into one StagesConfig."""

from __future__ import annotations

from bot.config import Settings


def test_the_stages_config_takes_the_stage_knobs_and_the_older_settings_that_reach_the_stages(monkeypatch):
    monkeypatch.setenv("REGBOT_STAGES_GRADE_PASS_SCORE", "60")
    monkeypatch.setenv("REGBOT_LLM_HANG_S", "4")
    monkeypatch.setenv("REGBOT_LAW_COLLECTIONS", "laws, 법령")

    config = Settings().stages_config()

    assert config.grade_pass_score == 60.0
    assert (config.structured_hang_s, config.stream_hang_s) == (1.0, 4.0)
    assert config.law_collections == ("laws", "법령")
