"""Who belongs to which group: Entra ID groups (Microsoft Graph) and Slack user groups,
behind core.ports.MembershipLookup, cached with an expiry (MEMBERSHIP_CACHE_SECONDS)."""
