"""Every numeric limit of the core, named once, and the few that several packages obey alike
(document size, retention, the HTTP read timeout). A limit only one other package obeys lives
in that package's limits.py (storage, sources, serving, models, directory, bot)."""

from typing import Final

MAX_MESSAGE_CHARS: Final = 2000
"""A user message longer than this (after trimming) is refused as `message_too_long`."""

MAX_QUESTION_CHARS: Final = MAX_MESSAGE_CHARS
"""`answer_from_documents.question` obeys the same limit as a user message."""

MAX_HISTORY_TURNS: Final = 3
"""Exchanges (user + assistant) kept in history and shown to the selector."""

MAX_TURN_LOG: Final = 20
"""Turn summaries kept in conversation state; the turns table is the full record."""

DEFAULT_TOP_K: Final = 3
MAX_TOP_K: Final = 5

RRF_K: Final = 60
"""Reciprocal rank fusion constant: score = sum of 1 / (RRF_K + rank)."""

HYBRID_CANDIDATES: Final = 20
"""Chunks each retriever contributes to the fusion."""

MAX_RESULT_CHARS: Final = 12_000
"""Serialized JSON size a tool output may have."""

MAX_DECISION_MESSAGE_CHARS: Final = 500
"""A selector's own message (clarification, refusal) is cut to this length."""

MAX_DECISION_ACTION_CHARS: Final = 64
MAX_SELECTOR_RAW_CHARS: Final = 20_000
"""Raw selector output beyond this is a parse error, not something to parse."""

MAX_CLARIFICATIONS_WITHOUT_PROGRESS: Final = 2
"""After this many clarification questions in a row without progress the turn hands off."""

MAX_CLARIFICATION_CHOICES: Final = 10
"""Candidates offered as buttons under a clarification question (Slack allows 25 elements
in an actions block; more than ten buttons is a list nobody reads)."""

MAX_FEEDBACK_TEXT_CHARS: Final = 500
"""The words a user may add to a 👎's reason (the Slack modal and Teams card cap the input)."""

PASSAGE_CHARS: Final = 1200
"""About how much of a passage an answer quotes (whole lines; the source holds the rest)."""

MIN_SHARED_WORDS: Final = 2
"""Words a passage's line shares with the question before word overlap picks the line that
holds a fact; with fewer (one shared name, another language), the nearest in meaning."""

MAX_PROCEDURE_STEPS: Final = 5
"""Sections one procedure answer walks through (and steps of a one-section procedure)."""

STEP_CHARS: Final = 480
"""A step of a procedure across sections quotes about this much of its section."""

SNIPPET_CHARS: Final = 240
"""Length of a source snippet."""

MAX_SOURCES: Final = 8
"""Sources an answer lists: every section it cites, then the page's best other retrieved ones.
A long page can fill all PAGE_DEPTH hits, and twenty sources (ids, titles, snippets) overflow
MAX_RESULT_CHARS; eight fit beside the longest answer, and a reader scans no more."""

MAX_DOCUMENT_ID_CHARS: Final = 64
MAX_DOCUMENT_BYTES: Final = 5_000_000
"""Files larger than this are skipped by the indexer."""

CHUNK_MAX_CHARS: Final = 1500
"""A heading section longer than this is split into windows (see bench/chunk_sizes.py)."""

CHUNK_TARGET_CHARS: Final = 1000
"""Target size of a window when a long section is split."""

CHUNK_OVERLAP_CHARS: Final = 200
"""Text repeated at the start of the next window, so a step split in two is found whole."""

SUPERSEDED_RETENTION_DAYS: Final = 90
"""Chunks of replaced document versions are kept this long so old citations still resolve."""

MODEL_CONCURRENCY: Final = 32
"""Default of DOCASSIST_MODEL_CONCURRENCY: model requests one process keeps in flight, and so
turns (a turn has one request out at a time). A hosted model serves dozens at once; with
4 turns at a time a 200 ms model answered ~9 messages a second (docs/benchmarks.md)."""
TURNS_PER_MODEL_REQUEST: Final = 2
"""Turns a replica runs per model request it may keep in flight: between its two model calls
and after them a turn retrieves, stores and posts, and with one turn per request the model
sat idle meanwhile (issue 25: ratio 0.53–0.59 of its capacity)."""
INBOX_LEASE_SECONDS: Final = 30.0
"""Default of DOCASSIST_INBOX_LEASE: how long a process's claim on an inbox event lasts
unless renewed. A process renews its claims every third of it while their turns run, so an
event acked by a process that died is taken by another within a lease (+ a poll)."""
CONVERSATION_ID_CACHE: Final = 4096
"""Conversation ids a process remembers (core/messages.py): a hash of the key's JSON, asked
for several times per event on the ack path."""

MAX_CHUNKS_PER_DOCUMENT: Final = 2_000
"""Chunks one document may make; a document beyond it is refused with a note. Prose at the
text limit makes ~1,250 windows; many tiny sections make more (the demo documents make at
most a few dozen, the largest Python HOWTO page ~120)."""

MAX_RETENTION_DAYS: Final = 36_500
"""Largest retention a setting or `--older-than` may name (100 years); beyond, the cutoff date
is out of the calendar's range (800,000 days crashed the bot at start)."""
ACK_DEADLINE_SECONDS: Final = 2.0
"""An event not stored within this time is answered 503 (the platform retries): Slack gives
up on an ack after 3 s, and a write behind another connection's lock may wait ~6.3 s."""

HTTP_READ_TIMEOUT_SECONDS: Final = 10.0
"""A client that does not send its body within this long is answered 408; one that has not
sent its headers (or sends nothing on an idle kept-alive connection) is disconnected
(bot/web.py): stalled clients hold no connection for long."""

MAX_TRANSLATIONS: Final = 3
"""Translations of the question a selector may add to `answer_from_documents` (each searched)."""

SOURCE_STALE_HOURS: Final = 24
"""A source without a successful sync for this long is shown as stale (report, admin views)."""

GAP_SIMILARITY: Final = 0.55
"""Cosine similarity at which `docassist gaps` puts a question in an existing group. Measured
with USE on paraphrases (English and Polish): the same question reworded scores 0.66-0.87,
different topics 0.01-0.39 (docs/traces-and-privacy.md, "Gaps")."""

GAP_DAYS: Final = 7
"""The period `docassist gaps` looks at without --since."""

GAP_EXAMPLES: Final = 3
"""Example questions shown per group."""

GAP_DOCUMENTS: Final = 3
"""Closest documents kept per question (and shown per group)."""

GAP_DIGEST_GROUPS: Final = 5
"""Groups listed in the weekly gaps digest (the rest are in `docassist gaps`)."""
