"""Every numeric limit of group-membership lookups, named once."""

from typing import Final

MEMBERSHIP_CACHE_SECONDS: Final = 900
"""How long a user's groups (Entra ID, Slack user groups) are reused before they are asked
again: a removed member keeps group-scoped collections at most this long."""
