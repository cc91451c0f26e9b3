"""docs/configuration.md and .env.example are generated from `Settings`: a setting added without regenerating them
fails here, with the command that fixes it."""

from __future__ import annotations

from bot import config_docs
from bot.config import Settings

FIX = f"out of date with bot/config.py Settings: run `.venv/bin/{config_docs.REGENERATE}` and commit the result"


def test_configuration_md_is_what_settings_generate():
    current = config_docs.CONFIGURATION_MD.read_text(encoding="utf-8")
    assert current == config_docs.configuration_markdown(), f"docs/configuration.md is {FIX}"


def test_env_example_is_what_settings_generate():
    current = config_docs.ENV_EXAMPLE.read_text(encoding="utf-8")
    assert current == config_docs.env_example(), f".env.example is {FIX}"


def test_every_setting_appears_in_both_files_by_its_variable_name():
    markdown = config_docs.configuration_markdown()
    example = config_docs.env_example()
    variables = [variable for variable, _ in config_docs.documented_settings()]
    for name, field in Settings.model_fields.items():
        assert field.alias in variables or name in ("retrieval", "stages")
    assert "REGBOT_RETRIEVAL_DENSE_WEIGHT" in variables  # a nested group is listed field by field
    assert "REGBOT_STAGES_GRADE_PASS_SCORE" in variables
    for variable in variables:
        assert f"| `{variable}` |" in markdown
        assert f"\n# {variable}=" in example


def test_env_example_never_carries_a_secret_value():
    example = config_docs.env_example()
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET",
                     "SLACK_APP_TOKEN", "MICROSOFT_APP_PASSWORD"):
        assert f"\n# {variable}=\n" in example


def test_env_example_leaves_every_line_commented_so_compose_keeps_the_defaults():
    lines = [line for line in config_docs.env_example().splitlines() if line.strip()]
    assert all(line.startswith("#") for line in lines)


def test_the_scopes_file_format_is_documented():
    assert "## The scopes file (`REGBOT_SCOPES_FILE`)" in config_docs.configuration_markdown()

