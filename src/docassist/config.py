"""Settings from the environment (`DOCASSIST_*`); secrets never come from files in the repo."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

_REPO_DEMO_DOCS = Path(__file__).resolve().parents[2] / "samples" / "docs"


def default_docs_path() -> Path:
    """The demo corpus: next to the source tree (editable install), else ./samples/docs."""
    return _REPO_DEMO_DOCS if _REPO_DEMO_DOCS.is_dir() else Path("samples/docs")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DOCASSIST_", extra="ignore")

    db: Path = Field(default=Path("docassist.db"), description="SQLite database file")
    model: str = Field(default="rules", description="Selector/answer backend, e.g. `rules`")
    language: Literal["pl", "en"] = Field(
        default="en", description="Reply language when the message does not tell"
    )
    docs: Path = Field(default_factory=default_docs_path,
                       description="Corpus indexed on first start when the catalog is empty")
    save_raw: bool = Field(default=False, description="Store raw text and prompts in traces")
    human_channel: str = Field(default="#docassist-help",
                               description="Where handoff replies send people")
