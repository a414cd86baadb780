"""Posting the weekly gaps digest (bot/gaps_digest.py) to a Teams channel.

A digest answers no message, so there is no conversation reference to continue: like "Ask a
human", it is a new message in the configured channel's conversation (the Bot Connector's
`POST /v3/conversations/{channel id}/activities`), sent through the service URL learnt from
any activity of that channel's team (`TeamsAdapter._remember_team`). Until one was seen the
post raises: the digest's lease is given back and the next tick tries again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from microsoft_agents.activity import Activity, ActivityTypes

from docassist.bot.gaps_digest import GapsDigest, digest_channels, lease_for
from docassist.bot.teams.app import TeamsAdapter
from docassist.bot.teams.direct import PostToChannel
from docassist.core.ports import TeamAddresses
from docassist.runtime import Runtime

logger = logging.getLogger(__name__)


def teams_poster(addresses: TeamAddresses, post_to_channel: PostToChannel,
                 channel: str) -> Callable[[str], None]:
    """`post(text)` to the channel, as plain text (examples are users' words: no markdown,
    no mentions); raises when the channel's team was not seen yet or the connector refuses,
    so the digest is retried."""
    def post(text: str) -> None:
        service_url = addresses.team_service_url(channel)
        if service_url is None:
            raise LookupError(f"Teams channel {channel} not reached yet: its service URL is "
                              "learnt from any activity of its team")
        post_to_channel(service_url, channel, Activity(type=ActivityTypes.message, text=text,
                                                       text_format="plain"))

    return post


def start_teams_gaps_digest(runtime: Runtime, adapter: TeamsAdapter | None
                            ) -> GapsDigest | None:
    """The digest to the `teams:` channel of DOCASSIST_GAPS_DIGEST_CHANNEL, when Teams is
    served and such a channel is set; it starts once the adapter's loop runs (its lease is
    Teams' own: Slack's digest is a separate post)."""
    channel = digest_channels(runtime.settings.gaps_digest_channel).get("teams")
    if adapter is None or not channel:
        return None
    digest = GapsDigest(runtime.store, teams_poster(runtime.store,
                                                    adapter.outbound.post_to_channel, channel),
                        runtime.settings.language, lease=lease_for("teams"))
    adapter.when_started(digest.start)
    logger.info("gaps digest for Teams channel %s", channel)
    return digest
