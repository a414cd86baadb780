"""Entra ID group membership of Teams users through Microsoft Graph (app-only).

`GET /users/{id}/transitiveMemberOf?$select=id` lists the user's groups, nested ones
included (the directory roles and administrative units it also lists are left out by their
`@odata.type`), following `@odata.nextLink`. Least privilege: the User.Read.All application
permission is enough; groups then come back with only their id and type, which is all a
scope needs (docs/scopes.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final
from urllib.parse import quote

from docassist.core.errors import DocAssistError
from docassist.directory.cache import Clock, ExpiringCache, LookupFailed
from docassist.sources.graph import GraphClient
from docassist.sources.remote import RemoteError

TEAMS: Final = "teams"
DIRECTORY_CHECK: Final = "directory:teams"
"""Its name among `/readyz`'s checks."""
GROUP_TYPE: Final = "#microsoft.graph.group"


class EntraMembership:
    """MembershipLookup for Teams users (AAD object ids). Graph is reached only when a
    group scope needs it: the client (whose token service MSAL reads at construction) is made
    at the first lookup, so a sign-in service that cannot be reached never stops a server
    from starting; `problem` says what is degraded (`/readyz`)."""

    def __init__(self, connect: Callable[[], GraphClient], *,
                 clock: Clock | None = None) -> None:
        self.connect = connect
        self.graph: GraphClient | None = None
        self.problem: str | None = None
        self._connecting = threading.Lock()
        self.cache: ExpiringCache[frozenset[str]] = ExpiringCache(
            self._fetch, frozenset(), clock=clock or time.monotonic)

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        if platform != TEAMS or not user_id:
            return frozenset()
        return self.cache.get(user_id)

    def _fetch(self, user_id: str) -> frozenset[str]:
        try:
            graph = self._graph()
            groups = frozenset(
                str(entry["id"]) for entry in graph.paged(
                    f"users/{quote(user_id, safe='')}/transitiveMemberOf", {"$select": "id"})
                if entry.get("@odata.type") == GROUP_TYPE and entry.get("id"))
        except (DocAssistError, RemoteError) as error:
            self.problem = f"Entra ID groups unavailable (no group scopes apply): {error}"
            raise LookupFailed(f"Entra ID groups of a Teams user: {error}") from error
        self.problem = None
        return groups

    def _graph(self) -> GraphClient:
        with self._connecting:
            if self.graph is None:
                self.graph = self.connect()
            return self.graph
