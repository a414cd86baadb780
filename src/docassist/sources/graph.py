"""Microsoft Graph with an app-only token: MSAL's client-credentials flow against Entra ID,
and an httpx client that puts the (cached, renewed) token on each request.

MSAL keeps the token in memory and asks the token service again only when it expires. A
refused credential (an expired or deleted client secret, a disabled app) or a token service
that cannot be reached is a SourceAuthError: the source shows it, and nothing is deleted.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Generator
from pathlib import Path
from typing import Any, Final

import httpx

from docassist.config import GraphSettings
from docassist.core.errors import ConfigurationError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.sources.remote import RemoteHttp, SourceAuthError
from docassist.sources.web import USER_AGENT

logger = logging.getLogger(__name__)

GRAPH_SCOPE: Final = "https://graph.microsoft.com/.default"
"""App-only tokens carry the permissions granted to the app; `.default` asks for them all."""


def _first_line(text: object) -> str:
    return str(text or "").strip().splitlines()[0][:200] if text else ""


def _session(ca_bundle: Path | None) -> Any:
    """MSAL's HTTP client; with `ca_bundle`, TLS is checked against that file. requests lets
    REQUESTS_CA_BUNDLE in the environment override a session's own `verify` (psf/requests
    #3829), so the configured file is put back after the environment is merged."""
    import requests

    class PinnedSession(requests.Session):
        def merge_environment_settings(self, *args: Any, **kwargs: Any) -> Any:
            merged = super().merge_environment_settings(*args, **kwargs)
            merged["verify"] = str(ca_bundle)
            return merged

    return PinnedSession() if ca_bundle is not None else requests.Session()


class GraphToken:
    """Client-credentials tokens for Graph from the environment's app registration."""

    def __init__(self, settings: GraphSettings) -> None:
        import msal
        import requests

        missing = settings.missing()
        if missing:
            raise ConfigurationError("Microsoft Graph credentials incomplete: " +
                                     ", ".join(missing) + " (or the DOCASSIST_TEAMS_* ones)")
        if not settings.authority_host.startswith("https://"):
            raise ConfigurationError("DOCASSIST_GRAPH_AUTHORITY_HOST must be an https URL")
        session = _session(settings.ca_bundle)
        secret = settings.client_secret.get_secret_value() if settings.client_secret else ""
        authority = f"{settings.authority_host.rstrip('/')}/{settings.tenant_id}"
        try:  # MSAL reads the authority's OpenID configuration here
            self.app = msal.ConfidentialClientApplication(
                settings.client_id, client_credential=secret, authority=authority,
                http_client=session, instance_discovery=False)
        except (ValueError, requests.RequestException) as error:
            raise SourceAuthError(f"Microsoft Entra ID ({authority}) could not be reached or "
                                  f"is not a valid authority: {type(error).__name__}") from error

    def bearer(self) -> str:
        import requests

        try:
            result: dict[str, Any] = self.app.acquire_token_for_client(scopes=[GRAPH_SCOPE])
        except requests.RequestException as error:
            raise SourceAuthError("Microsoft Entra ID could not be reached for a token: "
                                  f"{type(error).__name__}") from error
        token = result.get("access_token")
        if isinstance(token, str) and token:
            return token
        raise SourceAuthError(
            "Microsoft Entra ID refused the app's credentials "
            f"({result.get('error', 'no token')}: {_first_line(result.get('error_description'))}"
            "); the client secret may have expired or been revoked; nothing was removed")


class _BearerAuth(httpx.Auth):
    def __init__(self, token: GraphToken) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token.bearer()}"
        yield request


class GraphClient:
    """Graph requests (authenticated) and file downloads by pre-authenticated URL (sent
    without our token, which belongs to Graph alone)."""

    def __init__(self, settings: GraphSettings | None = None) -> None:
        resolved = (settings or GraphSettings()).resolved()
        self.base = resolved.url.rstrip("/")
        verify: ssl.SSLContext | bool = (ssl.create_default_context(cafile=resolved.ca_bundle)
                                         if resolved.ca_bundle else True)
        common: dict[str, Any] = {"headers": {"User-Agent": USER_AGENT}, "verify": verify,
                                  "follow_redirects": True,
                                  "timeout": httpx.Timeout(HTTP_READ_TIMEOUT_SECONDS)}
        self.token = GraphToken(resolved)
        self.http = RemoteHttp(httpx.Client(auth=_BearerAuth(self.token), **common),
                               "Microsoft Graph", origin=self.base)
        self.files = RemoteHttp(httpx.Client(**common), "Microsoft Graph downloads")

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base}/{path.lstrip('/')}"

    def json(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.http.json(self.url(path), params)

    def paged(self, path: str, params: dict[str, Any] | None = None
              ) -> Generator[dict[str, Any], None, None]:
        """Every entry of a collection, following `@odata.nextLink`."""
        next_url: str | None = self.url(path)
        query = params
        while next_url:
            body = self.http.json(next_url, query)
            yield from (entry for entry in body.get("value") or [] if isinstance(entry, dict))
            next_url, query = body.get("@odata.nextLink"), None

    def close(self) -> None:
        self.http.close()
        self.files.close()
