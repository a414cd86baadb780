"""Every numeric limit of the Slack adapter, named once."""

from typing import Final

from docassist.core.limits import MODEL_CONCURRENCY, TURNS_PER_MODEL_REQUEST

SLACK_DISPATCH_THREADS: Final = 64
"""Threads that run Bolt's (synchronous) listeners for the aiohttp server: an ack may wait up
to ACK_DEADLINE_SECONDS on the database, so a burst needs many at once (http.server used one
thread per connection, unbounded)."""

ANSWER_HISTORY_PAGE_SIZE: Final = 200
ANSWER_HISTORY_PAGES: Final = 5
"""How far back a restarted bot looks for an answer it may have posted before it died
(pages of a Slack thread's or DM's history, bot/slack/posted.py)."""

STREAM_APPEND_SECONDS: Final = 0.5
"""A streamed answer's sentences that arrive within this long of its last Slack call wait for
the next one (an append, or the stop): a model that sends several sentences at once costs one
call, not one per sentence (chat.appendStream is rate-limited; slack_sdk's own ChatStream
buffers by size instead). A model slower than this streams sentence by sentence."""

SLACK_API_KEPT_CONNECTIONS: Final = TURNS_PER_MODEL_REQUEST * MODEL_CONCURRENCY
"""Connections to Slack's Web API a process keeps open for reuse (bot/slack/web_api.py): one
per turn a replica runs at once at the default model concurrency."""
