"""Settings from the environment (`DOCASSIST_*`); secrets never come from files in the repo."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from docassist.core.limits import SUPERSEDED_RETENTION_DAYS

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
    embedder: Literal["use", "e5", "none"] = Field(
        default="use", description="Local sentence embedder for dense retrieval; none = BM25 only"
    )
    retriever: Literal["hybrid", "bm25", "dense"] = Field(
        default="hybrid", description="Retriever answers use (bm25 when embedder is none)"
    )
    superseded_retention_days: int = Field(
        default=SUPERSEDED_RETENTION_DAYS, ge=0,
        description="Days chunks of replaced document versions are kept",
    )
    save_raw: bool = Field(default=False, description="Store raw text and prompts in traces")
    human_channel: str = Field(default="#docassist-help",
                               description="Where handoff replies send people")
