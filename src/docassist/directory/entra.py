"""Entra ID group membership of Teams users through Microsoft Graph (app-only).

`GET /users/{id}/transitiveMemberOf?$select=id` lists the user's groups, nested ones
included (the directory roles and administrative units it also lists are left out by their
`@odata.type`), following `@odata.nextLink`. Least privilege: the User.Read.All application
permission is enough; groups then come back with only their id and type, which is all a
scope needs (README).
"""

from __future__ import annotations

import time
from typing import Final
from urllib.parse import quote

from docassist.core.errors import DocAssistError
from docassist.directory.cache import Clock, ExpiringCache, LookupFailed
from docassist.sources.graph import GraphClient
from docassist.sources.remote import RemoteError

TEAMS: Final = "teams"
GROUP_TYPE: Final = "#microsoft.graph.group"


class EntraMembership:
    """MembershipLookup for Teams users (AAD object ids)."""

    def __init__(self, graph: GraphClient, *, clock: Clock | None = None) -> None:
        self.graph = graph
        self.cache: ExpiringCache[frozenset[str]] = ExpiringCache(
            self._fetch, frozenset(), clock=clock or time.monotonic)

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        if platform != TEAMS or not user_id:
            return frozenset()
        return self.cache.get(user_id)

    def _fetch(self, user_id: str) -> frozenset[str]:
        try:
            return frozenset(
                str(entry["id"]) for entry in self.graph.paged(
                    f"users/{quote(user_id, safe='')}/transitiveMemberOf", {"$select": "id"})
                if entry.get("@odata.type") == GROUP_TYPE and entry.get("id"))
        except (DocAssistError, RemoteError) as error:
            raise LookupFailed(f"Entra ID groups of a Teams user: {error}") from error
