"""Slack user groups through the Web API: `usergroups.list`, then `usergroups.users.list`
for each group, inverted to user → groups and kept for MEMBERSHIP_CACHE_SECONDS (one
workspace per client). 429s are waited out by slack_sdk's rate-limit retry handler (it obeys
Retry-After). Least privilege: the bot token's `usergroups:read` scope (REQUIRED_SCOPE;
manifest.yml declares it, tests/slack/test_manifest.py checks).
"""

from __future__ import annotations

import time
from typing import Final

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from docassist.directory.cache import Clock, ExpiringCache, LookupFailed

SLACK: Final = "slack"
RATE_LIMIT_RETRIES: Final = 2
"""Extra tries of a throttled call (each after Slack's Retry-After)."""
WORKSPACE: Final = "workspace"
REQUIRED_SCOPE: Final = "usergroups:read"
"""The bot token scope `usergroups.list` and `usergroups.users.list` need."""


def with_rate_limit_retries(client: WebClient) -> WebClient:
    if not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(RateLimitErrorRetryHandler(
            max_retry_count=RATE_LIMIT_RETRIES))
    return client


class SlackUserGroups:
    """MembershipLookup for Slack users (member ids)."""

    def __init__(self, client: WebClient, *, clock: Clock | None = None) -> None:
        self.client = with_rate_limit_retries(client)
        self.cache: ExpiringCache[dict[str, frozenset[str]]] = ExpiringCache(
            self._fetch, {}, clock=clock or time.monotonic)

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        if platform != SLACK or not user_id:
            return frozenset()
        return self.cache.get(WORKSPACE).get(user_id, frozenset())

    def _fetch(self, _workspace: str) -> dict[str, frozenset[str]]:
        """User → the ids of the user groups they are in."""
        users: dict[str, set[str]] = {}
        try:
            for group in self.client.usergroups_list()["usergroups"] or []:
                group_id = str(group["id"])
                members = self.client.usergroups_users_list(usergroup=group_id)["users"]
                for user in members or []:
                    users.setdefault(str(user), set()).add(group_id)
        except SlackApiError as error:
            raise LookupFailed(f"Slack user groups: {error.response.get('error')}") from error
        except SlackClientError as error:
            raise LookupFailed(f"Slack user groups: {type(error).__name__}") from error
        return {user: frozenset(groups) for user, groups in users.items()}
