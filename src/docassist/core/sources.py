"""Document sources: what one is (kind, name, collection, settings) and what a sync reports.

No I/O here: the store keeps sources and their sync state, `docassist.sources` syncs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from docassist.core import i18n
from docassist.core.documents import DEFAULT_COLLECTION
from docassist.core.limits import SOURCE_STALE_HOURS

SOURCE_NAME_PATTERN: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class SourceKind(StrEnum):
    FOLDER = "folder"
    WEB = "web"
    CONFLUENCE = "confluence"
    SHAREPOINT = "sharepoint"


class ConfluenceDeployment(StrEnum):
    CLOUD = "cloud"
    """REST v2 under https://SITE.atlassian.net/wiki; Basic auth with email + API token."""
    DATACENTER = "datacenter"
    """REST (v1) of Confluence Data Center/Server; Bearer personal access token."""


class FolderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str


class WebSettings(BaseModel):
    """A web source: `url` is a sitemap (…/sitemap.xml, a sitemap index too) or a start page
    whose same-site links are followed. `auth_env` names an environment variable holding an
    Authorization header value: the name is stored, never the secret."""

    model_config = ConfigDict(extra="forbid")

    url: str
    auth_env: str | None = None
    allow_hosts: list[str] = Field(default_factory=list)
    """Hosts (`host` or `host:port`) besides the URL's own that the sync may fetch; no
    credentials are sent there (docassist.sources.walls)."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("the URL must start with http:// or https://")
        if "@" in value.split("://", 1)[1].split("/", 1)[0]:
            raise ValueError("the URL holds credentials (user:password@): put the "
                             "Authorization value in an environment variable and name it "
                             "with --auth-env")
        return value

    @field_validator("allow_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            text = host.strip()
            if not text or any(mark in text for mark in "/@?# "):
                raise ValueError(f"--allow-host takes a host or host:port, not {host!r}")
        return [host.strip().lower() for host in value]

    @property
    def is_sitemap(self) -> bool:
        return self.url.split("?", 1)[0].endswith(".xml")


class ConfluenceSettings(BaseModel):
    """A Confluence source: the site's base URL (Cloud: https://SITE.atlassian.net/wiki) and
    the keys of the spaces to index. Credentials come from the environment only
    (docassist.sources.confluence names the variables)."""

    model_config = ConfigDict(extra="forbid")

    url: str
    spaces: list[str] = Field(min_length=1)
    deployment: ConfluenceDeployment | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("the URL must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("spaces")
    @classmethod
    def _space_keys(cls, value: list[str]) -> list[str]:
        keys = [key.strip() for key in value if key.strip()]
        if not keys or any(not re.fullmatch(r"~?[A-Za-z0-9_.-]{1,255}", key) for key in keys):
            raise ValueError("space keys are letters, digits, _ . - (a personal space: ~name)")
        return keys

    @property
    def flavour(self) -> ConfluenceDeployment:
        """As configured, else Cloud for *.atlassian.net and Data Center otherwise."""
        if self.deployment is not None:
            return self.deployment
        host = self.url.split("://", 1)[1].split("/", 1)[0]
        cloud = host.endswith(".atlassian.net")
        return ConfluenceDeployment.CLOUD if cloud else ConfluenceDeployment.DATACENTER


class SharePointSettings(BaseModel):
    """A SharePoint document library (or a OneDrive) read through Microsoft Graph: `site` is
    a site URL (https://TENANT.sharepoint.com/sites/ops), `HOST:/sites/PATH` or a site id;
    `drive` a library's name or drive id (the site's default library when left out)."""

    model_config = ConfigDict(extra="forbid")

    site: str = Field(min_length=1)
    drive: str | None = None


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: SourceKind
    collection: str = DEFAULT_COLLECTION
    settings: dict[str, str | list[str] | None] = Field(default_factory=dict)

    @field_validator("name", "collection")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not SOURCE_NAME_PATTERN.match(value):
            raise ValueError("use lower-case letters, digits, - and _ (at most 63)")
        return value

    def folder(self) -> FolderSettings:
        return FolderSettings.model_validate(self.settings)

    def web(self) -> WebSettings:
        return WebSettings.model_validate(self.settings)

    def confluence(self) -> ConfluenceSettings:
        return ConfluenceSettings.model_validate(self.settings)

    def sharepoint(self) -> SharePointSettings:
        return SharePointSettings.model_validate(self.settings)

    def check_settings(self) -> None:
        """Validate the settings for this kind (ValidationError says what is wrong)."""
        {SourceKind.FOLDER: self.folder, SourceKind.WEB: self.web,
         SourceKind.CONFLUENCE: self.confluence, SourceKind.SHAREPOINT: self.sharepoint
         }[self.kind]()


class SourceStatus(BaseModel):
    """What `docassist sources --json` shows per source (the interface other checks use)."""

    name: str
    kind: SourceKind
    collection: str
    documents: int
    last_success: str | None
    last_error: str | None
    next_run: str | None
    last_run: str | None = None
    last_started: str | None = None
    """When the latest sync began (`last_run` is when one ended): a start after the last
    end is a sync running now, or one whose process died (another replica takes the source
    over when its lease expires)."""

    @property
    def failing(self) -> bool:
        return self.last_error is not None


@dataclass(frozen=True)
class SyncTimes:
    """When a source's latest sync began and when one last ended (ISO, UTC), as stored."""

    started: str | None
    finished: str | None


def sync_is_due(times: SyncTimes | None, every_seconds: float, now: datetime) -> bool:
    """A scheduled sync runs when no sync of the source (by any replica, scheduled or by
    hand, successful or not) ended within the interval: a failed sync is retried at the next
    interval, not by every replica at its next tick. A sync that began and never ended (its
    process died) does not count: once its lease expires, the source is due."""
    if times is None or times.finished is None:
        return True
    return now >= _due_after(datetime.fromisoformat(times.finished), every_seconds)


def next_run_after(finished: datetime, every_seconds: float | None) -> str | None:
    """The `next_run` shown for a sync that ended at `finished`: when `sync_is_due` makes
    the source due again (None when no schedule is set)."""
    if not every_seconds:
        return None
    return _due_after(finished, every_seconds).isoformat(timespec="milliseconds")


def _due_after(finished: datetime, every_seconds: float) -> datetime:
    return finished + timedelta(seconds=every_seconds)


class SourceHealth(StrEnum):
    OK = "ok"
    STALE = "stale"
    """No successful sync within SOURCE_STALE_HOURS (or never)."""
    FAILING = "failing"
    """The last sync failed (partly or wholly)."""


def health(status: SourceStatus, now: datetime) -> SourceHealth:
    if status.last_error is not None:
        return SourceHealth.FAILING
    if status.last_success is None or datetime.fromisoformat(status.last_success) < (
            now - timedelta(hours=SOURCE_STALE_HOURS)):
        return SourceHealth.STALE
    return SourceHealth.OK


def describe_sources(statuses: list[SourceStatus], language: i18n.Language) -> list[str]:
    """One line per source for the admin views (Slack and Teams say the same)."""
    if not statuses:
        return [i18n.text("sources_none", language)]
    never = i18n.text("source_never", language)
    return [i18n.text(
        "source_line", language, name=s.name, kind=s.kind, collection=s.collection,
        documents=s.documents, last_success=(s.last_success or never)[:16].replace("T", " "),
        next_run=(s.next_run or "—")[:16].replace("T", " "),
        problem=i18n.text("source_failing", language, error=s.last_error[:300])
        if s.last_error else "") for s in statuses]


@dataclass
class SyncOutcome:
    """One source's sync: document ids by what happened to them, and what failed."""

    name: str
    kind: SourceKind
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    """Items (URLs, paths) that could not be synced this time; what they were stays."""
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Items the source may not take (off its walls, over the size limit), with why: never
    fetched or never indexed, and not a failure of the sync."""

    def skip(self, item: str, reason: str) -> None:
        self.skipped.append((item, reason))
        self.notes.append(f"{item}: skipped: {reason}")

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors) if self.errors else None

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "updated": len(self.updated),
                "deleted": len(self.deleted), "unchanged": len(self.unchanged),
                "failed": len(self.failed)}

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "kind": str(self.kind), **self.counts(), "error": self.error,
                "skipped": len(self.skipped),
                "skips": [{"item": item, "reason": reason} for item, reason in self.skipped]}
