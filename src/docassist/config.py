"""Settings from the environment (`DOCASSIST_*`); secrets never come from files in the repo."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal, TypeVar, get_args, get_origin

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from docassist.core.errors import ConfigurationError
from docassist.core.limits import (
    INBOX_LEASE_SECONDS,
    MAX_RETENTION_DAYS,
    MODEL_CONCURRENCY,
    SUPERSEDED_RETENTION_DAYS,
    TURNS_PER_MODEL_REQUEST,
)
from docassist.models.base import DEFAULT_TIMEOUT_SECONDS
from docassist.models.gate import ModelGate
from docassist.models.ollama import DEFAULT_OLLAMA_URL
from docassist.models.openai import DEFAULT_OPENAI_URL
from docassist.models.registry import ModelConfig
from docassist.sources.limits import SYNC_LEASE_SECONDS

SETTINGS_PREFIX: Final = "DOCASSIST_"
"""Every Settings field is read from the variable of its name in upper case after it."""

MAX_MODEL_CONCURRENCY: Final = 512
"""Largest DOCASSIST_MODEL_CONCURRENCY (and DOCASSIST_INBOX_WORKERS)."""

MAX_TURN_PROCESSES: Final = 64
"""Largest DOCASSIST_TURN_PROCESSES: processes that run turns beside the one serving."""

TURN_NICE: Final = 10
"""Default of DOCASSIST_TURN_NICE (measured in docs/acks-and-capacity-history.md)."""

STALE_NOTE_ACTIVE_DAYS: Final = 14
"""Threads active within this many days get a note when a version they cited changes."""

_REPO_DEMO_DOCS = Path(__file__).resolve().parents[2] / "samples" / "docs"
APP_NAME = "docassist"
DATABASE_FILE = "docassist.db"
FOLDER_DATABASE = Path(DATABASE_FILE)
"""Where the database lived before it moved to the user's data folder: the working folder."""


def user_database() -> Path:
    """The per-user default database, in the platform's data folder (Linux:
    $XDG_DATA_HOME/docassist, else ~/.local/share/docassist; macOS: ~/Library/Application
    Support/docassist), so `docassist` finds the same documents from any folder."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DATABASE_FILE


def default_database() -> str:
    """DOCASSIST_DB when unset. A `docassist.db` in the working folder is the one this user
    has been using (the old default): it stays in use, never silently replaced by an empty
    one (the CLI says where the database lives now and how to move it: folder_database_note).
    Otherwise the per-user database, its folder made on first use."""
    if FOLDER_DATABASE.is_file():
        return str(FOLDER_DATABASE)
    path = user_database()
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


def default_teams_manifest() -> Path:
    """The Teams manifest template: next to the source tree, else ./teams/manifest.json."""
    beside = _REPO_DEMO_DOCS.parent.parent / "teams" / "manifest.json"
    return beside if beside.is_file() else Path("teams/manifest.json")


def default_docs_path() -> Path:
    """The demo corpus: next to the source tree (editable install), else ./samples/docs."""
    return _REPO_DEMO_DOCS if _REPO_DEMO_DOCS.is_dir() else Path("samples/docs")


class Settings(BaseSettings):
    """What every command reads: the database, models, retrieval, limits, syncs, privacy."""

    model_config = SettingsConfigDict(env_prefix=SETTINGS_PREFIX, extra="ignore")

    db: str = Field(default_factory=default_database,
                    description="SQLite database file, or postgresql://USER@HOST:PORT/DB "
                    "(default: docassist.db in the user's data folder)")
    model: str = Field(default="rules",
                       description="Selection backend: rules, ollama:<model>, openai:<model>, "
                       "replay:<file>")
    answer_model: str | None = Field(default=None,
                                     description="Answer backend; defaults to DOCASSIST_MODEL")
    shadow_model: str | None = Field(default=None,
                                     description="Candidate selection backend run in shadow "
                                     "mode: recorded, never executed")
    language: Literal["pl", "en"] = Field(
        default="en", description="Reply language when the message does not tell"
    )
    docs: Path = Field(default_factory=default_docs_path,
                       description="Corpus `chat` and `ask` index on first start when the "
                       "catalog is empty and no source is configured (default: the demo "
                       "corpus, samples/docs)")
    embedder: str = Field(
        default="use",
        description="Embedder for dense retrieval: use, e5, ollama:<model>, openai:<model>, "
        "replay:<file>, or none (BM25 only)",
    )
    retriever: Literal["ranked", "hybrid", "bm25", "dense"] = Field(
        default="ranked", description="Retriever answers use: ranked (BM25 and dense "
        "candidates ranked by the learned second stage), hybrid (fused only), bm25, dense "
        "(bm25 when embedder is none)"
    )
    answer_threshold: float | None = Field(
        default=None, ge=0, le=1,
        description="Evidence an answer needs, on the default retriever's scale (ranked: the "
        "probability that the best page answers); higher means fewer wrong answers and more "
        "refusals (docs/ranker-threshold.md); default: the retriever's calibrated value",
    )
    superseded_retention_days: int = Field(
        default=SUPERSEDED_RETENTION_DAYS, ge=0, le=MAX_RETENTION_DAYS,
        description="Days chunks of replaced document versions are kept",
    )
    ollama_url: str = Field(default=DEFAULT_OLLAMA_URL, description="Ollama server")
    openai_base_url: str = Field(default=DEFAULT_OPENAI_URL,
                                 description="OpenAI-compatible base URL (…/v1; Azure: the "
                                 "resource URL)")
    openai_api_key: SecretStr | None = Field(default=None, description="API key (secret)")
    azure_api_version: str | None = Field(default=None,
                                          description="Set for Azure OpenAI, e.g. 2024-10-21")
    model_timeout: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0,
                                 description="Seconds per model request")
    rate_per_user: int = Field(default=20, ge=0,
                               description="Turns per minute per user (0 = unlimited)")
    model_concurrency: int = Field(default=MODEL_CONCURRENCY, ge=1, le=MAX_MODEL_CONCURRENCY,
                                   description="Model requests one replica keeps in flight at "
                                   "most (shared by its turn processes): its share of the "
                                   "model server's capacity; it runs twice as many turns")
    inbox_workers: int | None = Field(default=None, ge=1, le=MAX_MODEL_CONCURRENCY,
                                      description="Optional cap on the turns one process "
                                      "runs at once, below DOCASSIST_MODEL_CONCURRENCY")
    turn_processes: int | None = Field(
        default=None, ge=0, le=MAX_TURN_PROCESSES,
        description="Processes that run Slack and Teams turns beside the process that "
        "receives events (HTTP or Socket Mode), so acks never wait for turns (0 = turns in "
        "that process; Teams' expectReplies turns always run there; default: one per CPU "
        "core)")
    turn_nice: int = Field(
        default=TURN_NICE, ge=0, le=19,
        description="How much lower the turn processes' CPU priority is than the serving "
        "process's (a nice increment): when both want a core, acks go first")
    inbox_lease: float = Field(default=INBOX_LEASE_SECONDS, gt=0, le=3600,
                               description="Seconds a process's claim on an inbox event "
                               "lasts unless renewed (renewed while its turn runs)")
    rate_global: int = Field(default=300, ge=0,
                             description="Turns per minute in total (0 = unlimited)")
    trace_retention_days: int = Field(
        default=0, ge=0, le=MAX_RETENTION_DAYS,
        description="Delete traces older than this many days, daily, while the bot runs "
        "(0 keeps them)")
    save_raw: bool = Field(default=False, description="Store raw text and prompts in traces")
    canary_sets: str = Field(
        default="samples/decisions_dev.jsonl,samples/answers_dev.jsonl",
        description="Comma-separated labelled sets `docassist eval canary` runs (paths "
        "relative to the working directory)")
    gaps_digest_channel: str = Field(
        default="", description="Where the week's gaps are posted once a week: a Slack "
        "channel id, or `slack:ID,teams:CONVERSATION_ID` (empty = off)")
    canary_after_sync: bool = Field(
        default=False, description="Run `eval canary` after every sync that changed "
        "documents; regressions are logged as warnings and show in the report")
    canary_after_model_change: bool = Field(
        default=False, description="When `serve`, `slack` or `teams` starts with other "
        "models (selection, answers, embeddings) or tools than the latest canary run, run "
        "`eval canary` in the background; regressions are logged and show in the report")
    human_channel: str = Field(default="#docassist-help",
                               description="Where handoff replies send people")
    sync_every: int = Field(default=0, ge=0,
                            description="Seconds between scheduled syncs of every source while "
                            "`serve`, `slack` or `teams` runs (0 = off; `docassist sync` "
                            "runs one by hand)")
    sync_lease: float = Field(default=SYNC_LEASE_SECONDS, gt=0,
                              description="Seconds a sync holds its source's lease; a "
                              "replica that died mid-sync frees the source after it")
    stale_notes: bool = Field(default=True,
                              description="Tell a thread when a document its latest answer "
                              "cited was changed or removed by a sync")
    stale_note_days: int = Field(default=STALE_NOTE_ACTIVE_DAYS, ge=1, le=MAX_RETENTION_DAYS,
                                 description="Only threads active within this many days get "
                                 "such a note")

    def uses_folder_database(self) -> bool:
        """True when DOCASSIST_DB is unset and ./docassist.db (the old default) is in use."""
        return "db" not in self.model_fields_set and self.db == str(FOLDER_DATABASE)

    def turns_in_flight(self) -> int:
        """Turns one replica runs at once: TURNS_PER_MODEL_REQUEST per model request it may
        keep in flight (a turn is outside the model part of the time), or fewer when
        DOCASSIST_INBOX_WORKERS caps them."""
        turns = TURNS_PER_MODEL_REQUEST * self.model_concurrency
        return min(turns, self.inbox_workers or turns)

    def turn_process_count(self) -> int:
        """DOCASSIST_TURN_PROCESSES, or one per CPU core this process may use."""
        if self.turn_processes is not None:
            return self.turn_processes
        return max(1, len(os.sched_getaffinity(0)))

    def turns_per_process(self) -> int:
        """A turn process's share of the replica's turns in flight (rounded up)."""
        return -(-self.turns_in_flight() // max(1, self.turn_process_count()))

    def model_requests_per_process(self) -> int:
        """A process's share of DOCASSIST_MODEL_CONCURRENCY (rounded up): each turn process
        of a replica gets one (models/gate.py)."""
        return -(-self.model_concurrency // max(1, self.turn_process_count()))

    @field_validator("db", mode="before")
    @classmethod
    def _db_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, os.PathLike) else value

    def model_config_for(self, record_path: Path | None = None) -> ModelConfig:
        key = self.openai_api_key.get_secret_value() if self.openai_api_key else None
        return ModelConfig(ollama_url=self.ollama_url, openai_base_url=self.openai_base_url,
                           gate=ModelGate(self.model_requests_per_process()),
                           openai_api_key=key, azure_api_version=self.azure_api_version,
                           timeout_seconds=self.model_timeout, record_path=record_path)


AnySettings = TypeVar("AnySettings", bound=BaseSettings)


def load_settings() -> Settings:
    """The settings every command reads (from_environment)."""
    return from_environment(Settings)


def from_environment(kind: type[AnySettings]) -> AnySettings:
    """`kind` (Settings, TeamsSettings…) from the environment; a bad value is a
    ConfigurationError naming each variable, its value and what it accepts (pydantic's text
    names the field only, or dumps every error with a link)."""
    try:
        return kind()
    except ValidationError as error:
        problems = "; ".join(_setting_problem(kind, problem) for problem in error.errors())
        raise ConfigurationError(f"invalid configuration: {problems}") from None


def _setting_problem(kind: type[BaseSettings], problem: ErrorDetails) -> str:
    """`DOCASSIST_RETRIEVER='bm26' is not one of ranked, hybrid, bm25, dense`, or
    `DOCASSIST_TURN_NICE='50': Input should be less than or equal to 19`."""
    name = str(problem["loc"][0]) if problem["loc"] else ""
    field = kind.model_fields.get(name)
    annotations = () if field is None else (field.annotation, *get_args(field.annotation))
    value = repr(problem.get("input"))  # no secret here: a SecretStr takes any text
    choices = next((get_args(annotation) for annotation in annotations
                    if get_origin(annotation) is Literal), ())
    variable = str(kind.model_config.get("env_prefix") or "") + name.upper()
    if choices:
        return f"{variable}={value} is not one of {', '.join(map(str, choices))}"
    return f"{variable}={value}: {problem['msg']}"


class SlackSettings(BaseSettings):
    """Slack credentials and endpoints: the names Slack's own docs use, from the environment."""

    # Only the aliases: populate_by_name would also read BOT_TOKEN, API_URL, ADMIN_USERS…
    # from the environment, and any unrelated API_URL would receive the bot's token.
    model_config = SettingsConfigDict(extra="ignore")

    bot_token: SecretStr = Field(alias="SLACK_BOT_TOKEN",
                                 description="The bot user OAuth token, xoxb-… (secret)")
    signing_secret: SecretStr = Field(alias="SLACK_SIGNING_SECRET",
                                      description="Verifies every request Slack sends "
                                      "(secret)")
    app_token: SecretStr | None = Field(default=None, alias="SLACK_APP_TOKEN",
                                        description="App-level token, xapp-…, for Socket "
                                        "Mode (`docassist slack` without --http; secret)")
    api_url: str = Field(default="https://slack.com/api/", alias="DOCASSIST_SLACK_API_URL",
                         description="Slack Web API base URL (tests point it at a fake)")
    admin_users: str = Field(default="", alias="DOCASSIST_ADMIN_USERS",
                             description="Comma-separated Slack member ids allowed "
                             "`/docassist-admin`")
    private_channels: str = Field(default="", alias="DOCASSIST_SLACK_PRIVATE_CHANNELS",
                                  description="Comma-separated channel ids whose answers only "
                                  "the asker sees, with a Share in channel button")

    def private(self) -> frozenset[str]:
        """Channel ids whose answers only the asker sees (comma-separated)."""
        return frozenset(c.strip() for c in self.private_channels.split(",") if c.strip())


class TeamsSettings(BaseSettings):
    """The Teams bot's Entra app registration (from the environment) and who is an admin.

    Without `DOCASSIST_TEAMS_ANONYMOUS=true`, app id, tenant and secret are required and every
    request's JWT is validated against them.
    """

    model_config = SettingsConfigDict(env_prefix="DOCASSIST_TEAMS_", extra="ignore")

    app_id: str = Field(default="", description="The bot's Entra application (client) id")
    tenant_id: str = Field(default="", description="The Entra tenant of the app registration")
    app_password: SecretStr | None = Field(default=None, description="Client secret (secret)")
    anonymous: bool = Field(default=False,
                            description="Accept requests without a JWT (local testing only)")
    human_channel: str = Field(default="", description="The conversation id of the Teams "
                               "channel where \"Ask a human\" posts (empty: none)")
    admin_users: str = Field(default="",
                             description="Comma-separated AAD object ids allowed to run stats")
    website_url: str = Field(default="", description="The Teams app's developer website "
                             "(teams-package; https)")
    privacy_url: str = Field(default="", description="The Teams app's privacy statement "
                             "(teams-package; https)")
    terms_url: str = Field(default="", description="The Teams app's terms of use "
                           "(teams-package; https)")

    def missing_credentials(self) -> list[str]:
        if self.anonymous:
            return []
        wanted = {"DOCASSIST_TEAMS_APP_ID": self.app_id, "DOCASSIST_TEAMS_TENANT_ID":
                  self.tenant_id, "DOCASSIST_TEAMS_APP_PASSWORD": self.app_password}
        return [name for name, value in wanted.items() if not value]

    def admins(self) -> frozenset[str]:
        return frozenset(user.strip() for user in self.admin_users.split(",") if user.strip())


GRAPH_URL = "https://graph.microsoft.com/v1.0"
ENTRA_AUTHORITY_HOST = "https://login.microsoftonline.com"


class GraphSettings(BaseSettings):
    """The Entra app registration DocAssist reads SharePoint/OneDrive and group membership
    with (app-only, client credentials). Unset values fall back to the Teams bot's
    registration (DOCASSIST_TEAMS_APP_ID, _TENANT_ID, _APP_PASSWORD), so one app can serve
    both when it has been granted the Graph permissions (docs/sources.md, SharePoint)."""

    model_config = SettingsConfigDict(env_prefix="DOCASSIST_GRAPH_", extra="ignore")

    tenant_id: str = Field(default="", description="Entra tenant id")
    client_id: str = Field(default="", description="Application (client) id")
    client_secret: SecretStr | None = Field(default=None, description="Client secret (secret)")
    url: str = Field(default=GRAPH_URL, description="Microsoft Graph base URL")
    authority_host: str = Field(default=ENTRA_AUTHORITY_HOST,
                                description="Entra ID sign-in host (https only)")
    ca_bundle: Path | None = Field(default=None,
                                   description="CA file for the token service and Graph (a "
                                   "TLS-inspecting proxy's CA); the system's CAs otherwise")

    def resolved(self) -> GraphSettings:
        """These settings with the Teams registration filling what is unset."""
        teams = TeamsSettings()
        return self.model_copy(update={
            "tenant_id": self.tenant_id or teams.tenant_id,
            "client_id": self.client_id or teams.app_id,
            "client_secret": self.client_secret or teams.app_password})

    def missing(self) -> list[str]:
        wanted = {"DOCASSIST_GRAPH_TENANT_ID": self.tenant_id,
                  "DOCASSIST_GRAPH_CLIENT_ID": self.client_id,
                  "DOCASSIST_GRAPH_CLIENT_SECRET": self.client_secret}
        return [name for name, value in wanted.items() if not value]
