"""Every numeric limit of the core, named once."""

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

BM25_SIMILARITY_THRESHOLD: Final = 0.2
"""BM25 score = share of the question's word stems in the chunk (0..1); see storage.search."""

DENSE_SIMILARITY_THRESHOLD: Final = 0.2
"""Cosine similarity (-1..1) for the dense and hybrid retrievers. Measured with USE: the best
chunk of off-topic questions scores at most 0.16 (demo) / 0.19 (Python HOWTOs); 90% / 100%
of answerable questions score above 0.2. See docs/retrieval.md."""

RRF_K: Final = 60
"""Reciprocal rank fusion constant: score = sum of 1 / (RRF_K + rank)."""

HYBRID_BM25_WEIGHT: Final = 1.0
"""Weight of a BM25 vote in the fusion (dense has 1.0)."""

HYBRID_CANDIDATES: Final = 20
"""Chunks each retriever contributes to the fusion."""

EMBED_BATCH: Final = 32
"""Chunks embedded per call while indexing."""

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

STORAGE_BUSY_TIMEOUT_MS: Final = 2000
"""SQLite's busy handler waits this long (sleeping in growing steps) for another connection's
write lock before a statement gives up with SQLITE_BUSY."""

STORAGE_READ_CONNECTIONS: Final = 4
"""SQLite connections one process keeps for a turn's reads (a conversation, a chunk, the
index version, the scope mappings): WAL readers never wait for a writer, so these reads do not
queue behind the shared connection while it waits for another process's write lock."""

STORAGE_WRITE_ATTEMPTS: Final = 3
"""Times a write transaction tries to take the lock, each waiting up to the busy timeout; after
the last, StorageBusyError. Bound: 3 × 2 s + backoff ≈ 6.3 s. Also the tries of a PostgreSQL
inbox batch that PostgreSQL cancelled as a deadlock (postgres/inbox.py)."""

WRITER_TURN_POLL_SECONDS: Final = 0.0005
"""How often a writer waiting for another DocAssist connection's write transaction on the same
SQLite file looks again (storage/writer_turns.py); SQLite's own busy handler sleeps up to
25 ms between looks at first, 100 ms later."""

STORAGE_RETRY_BACKOFF_SECONDS: Final = 0.1
"""Pause before the second attempt to take the write lock, doubled before each further one."""
MAX_SHARED_WRITES: Final = 64
"""Writes of one SQLite process that one shared transaction takes at most
(storage/shared_writes.py); the rest share the next. A bound, not a tuned value: under a
50-connection burst batches held 3 writes at p50, 8–9 at p90, 17 at most."""

STORAGE_MIN_FREE_PAGES: Final = 32
"""A turn does not start when the database is this close to its page limit: a turn writes a
few pages, and a full disk found only at commit would come after the tool ran."""

STORAGE_MIN_FREE_BYTES: Final = 1_000_000
"""Likewise for the file system holding the database (and its WAL)."""

PG_POOL_MAX: Final = 16
"""Connections one process keeps to PostgreSQL at most: the inbox workers, the ack path and
the index warmer each hold one briefly; 3 replicas use at most 48 of the default 100."""

CHUNK_CACHE_ENTRIES: Final = 20_000
"""Chunks a store (SQLite or PostgreSQL) keeps in memory by id (storage/chunk_cache.py: a
chunk id names one version of one section, so its text never changes): a hybrid question
reads ~20 candidates and a procedure every section of its document, each a query otherwise."""

PG_CHECK_IDLE_SECONDS: Final = 1.0
"""A pooled PostgreSQL connection idle longer than this is checked before use (a server
restart cuts them all; busy ones are used at once)."""

PG_CONNECT_TIMEOUT_SECONDS: Final = 5.0
"""How long a PostgreSQL operation waits for a connection (the server restarting, the pool
exhausted) before the turn fails with `storage_unavailable`."""

PG_RECONNECT_SECONDS: Final = 10.0
"""How long the pool retries a lost connection (its delay doubling from 1 s) before it gives
up and the next operation starts afresh: after a database restart a replica is back within a
few seconds (psycopg_pool's default, 5 minutes, let the delay grow to about the outage's
length)."""

LEXICAL_INDEX_PAGE_ROWS: Final = 8192
"""FTS rows read (and tokenized) at a time when the in-memory BM25 index is rebuilt; bounds
the memory the rebuild needs on top of the index."""
LEXICAL_TERM_CACHE_BYTES: Final = 256_000_000
"""Memory for BM25 term scores kept between questions (storage.term_scores): a common
word's scores take 8 bytes a row, so at 1M chunks this holds the 32 most recently used
common words (the synthetic benchmark's 30-word vocabulary all fits)."""
INBOX_WORKERS: Final = 4
"""Turns one process ran at once before issue 25 (DOCASSIST_INBOX_WORKERS was required to be
raised by hand); now it is an optional per-process cap below MODEL_CONCURRENCY."""
MODEL_CONCURRENCY: Final = 32
"""Default of DOCASSIST_MODEL_CONCURRENCY: model requests one process keeps in flight, and so
turns (a turn has one request out at a time). A hosted model serves dozens at once; with
4 turns at a time a 200 ms model answered ~9 messages a second (docs/benchmarks.md)."""
MAX_MODEL_CONCURRENCY: Final = 512
TURNS_PER_MODEL_REQUEST: Final = 2
"""Turns a replica runs per model request it may keep in flight: between its two model calls
and after them a turn retrieves, stores and posts, and with one turn per request the model
sat idle meanwhile (issue 25: ratio 0.53–0.59 of its capacity)."""
MAX_DELIVERY_ATTEMPTS: Final = 3
"""Times the inbox worker sends a reply before it marks the event `failed` (core/delivery.py)."""
INBOX_LEASE_SECONDS: Final = 30.0
"""Default of DOCASSIST_INBOX_LEASE: how long a process's claim on an inbox event lasts
unless renewed. A process renews its claims every third of it while their turns run, so an
event acked by a process that died is taken by another within a lease (+ a poll)."""
MAX_TURN_PROCESSES: Final = 64
"""Largest DOCASSIST_TURN_PROCESSES: processes that run Slack turns beside the one serving."""
TURN_NICE: Final = 10
"""Default of DOCASSIST_TURN_NICE (measured in docs/acks-and-capacity-history.md)."""
TURN_PROCESS_RESTART_SECONDS: Final = (1.0, 30.0)
"""A turn process that exits is started again after the first delay, doubled per exit in a
row up to the second (one that lived TURN_PROCESS_STABLE_SECONDS starts from the first)."""
TURN_PROCESS_STABLE_SECONDS: Final = 60.0
TURN_PROCESS_START_SECONDS: Final = 60.0
"""How long the serving process waits for its first turn process to be ready before it opens
its port anyway (loading the embedder and the indexes takes seconds)."""
TURN_PROCESS_STOP_SECONDS: Final = 15.0
"""On shutdown, how long turn processes may take to finish the turns they run before they
are terminated (their events stay claimed until the lease ends, then are answered again);
below systemd's TimeoutStopSec in deploy/docassist.service."""
CONVERSATION_ID_CACHE: Final = 4096
"""Conversation ids a process remembers (core/messages.py): a hash of the key's JSON, asked
for several times per event on the ack path."""
QUERY_CACHE_ENTRIES: Final = 256
"""Question vectors an embedder keeps (models/embedders.RecentQueries): ~0.5 MB at 512
dimensions; a turn asks for its question's vector twice (search, then gaps)."""
QUERY_EMBED_BATCH: Final = 16
"""Questions embedded in one forward pass at most, when turns ask at the same time
(models/embedders.py): measured with USE on 2 cores, 4.7 ms of CPU for one question alone,
1.8 ms each in a batch of 8 and 1.3 ms in a batch of 16."""
INBOX_POLL_SECONDS: Final = 0.5
"""How often an idle process looks for events it can claim (stored by another process, or
whose claim expired); its own arrivals and finished turns wake it at once."""
SCHEDULE_LEASE_SECONDS: Final = 86_400.0
"""Scheduled jobs (trace retention) run under a lease this long: one process per day runs
them, whichever claims it first."""
RETENTION_PERIOD_SECONDS: Final = 24 * 60 * 60
"""How often a serving process applies the trace retention (storage/exports.py)."""
RETENTION_RETRY_SECONDS: Final = 1.0
"""The soonest a retention run skipped for another process's lease is tried again (a lease
that ended as it was read)."""

MAX_EXPANDED_BYTES: Final = 10_000_000
"""What a packed file (a DOCX is a zip) may unpack to, all members together, checked from the
zip's directory before anything is parsed. A 108 KB DOCX that unpacked to 20 MB of XML took
242 s to index and made 12,788 chunks; real documents of 5 MB (mostly images) unpack to a
few MB."""

MAX_DOCUMENT_TEXT_CHARS: Final = 1_000_000
"""Text one document may yield, whatever its format (about 400 pages); beyond it the file is
refused with a note rather than cut."""

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

ACK_WRITERS: Final = 32
"""Threads that store arriving events; a burst shares their transactions (group commit)."""

SLACK_API_KEPT_CONNECTIONS: Final = TURNS_PER_MODEL_REQUEST * MODEL_CONCURRENCY
"""Connections to Slack's Web API a process keeps open for reuse (bot/slack/web_api.py): one
per turn a replica runs at once at the default model concurrency."""

HTTP_READ_TIMEOUT_SECONDS: Final = 10.0
"""A client that does not send its body within this long is answered 408; one that has not
sent its headers (or sends nothing on an idle kept-alive connection) is disconnected
(bot/web.py): stalled clients hold no connection for long."""

ANN_MIN_ROWS: Final = 50_000
"""From this many chunk vectors the dense side searches an approximate index (faiss IVF,
4-bit codes); below it an exact matrix product is as fast and exact (bench/ann_candidates.py)."""
ANN_LISTS_PER_SQRT: Final = 2.0
"""IVF groups: this many times the square root of the vector count (632 at 100k, 2,000 at
1M). With half as many, a third of them agreed on 0.974 of the top 10, not 0.984."""
ANN_PROBE_SHARE: Final = 1 / 3
"""Share of the IVF groups a question scans; chosen so the top 10 agree with exact search
on ≥ 0.98 of real embeddings (bench/run.py `ann_agreement_at_10`: 1/16 → 0.91, 1/8 → 0.95,
1/4 → 0.974, 1/3 → 0.984 on 298 real questions over 61k chunks). Questions sit far from
their passages in USE's space, so their neighbours spread over many groups."""
ANN_RERANK_CANDIDATES: Final = 800
"""Candidates the IVF index finds for a question, ranked again by the stored int8 vectors.
The 4-bit codes it scans are coarse, so it takes many (61k real chunks: top-10 agreement
0.975 with 200, 0.981 with 400, 0.983 with 800; 1,600 left faiss's fast path, 50 ms)."""
ANN_FAST_SCAN_MIN_TRAIN: Final = 1000
"""Below this many training vectors the IVF groups hold 8-bit vectors instead of 4-bit
codes (each of the codes' 16 centroids per part wants many points; tiny indexes in tests)."""
EMBED_WORKERS: Final = 2
"""Threads embedding batches at once while the indexer stores finished ones."""
WARM_POLL_SECONDS: Final = 1.0
"""How often a serving process looks for a changed index, to rebuild its search indexes
before the next question needs them."""
GC_YOUNG_ALLOCATIONS: Final = 10_000
"""A serving or turn process collects its youngest objects after this many allocations
(CPython's default is 700): a turn keeps many objects alive for its length, so each young
collection walked them again. Measured (issue 25, two turn processes, 50-connection burst):
115 young collections taking 370 ms in all, against 5–6 taking 56–59 ms."""
MAX_TRANSLATIONS: Final = 3
"""Translations of the question a selector may add to `answer_from_documents` (each searched)."""

WEB_MAX_PAGES: Final = 500
"""Pages one web source may hold (sitemap entries beyond it, or crawled links, are left out
with a note): a runaway sitemap or a calendar of generated pages cannot fill the catalog."""

WEB_MAX_DEPTH: Final = 3
"""Links followed from a web source's start page (the start page is depth 0)."""

WEB_REQUEST_ATTEMPTS: Final = 3
"""Tries per web request when the site answers 429 or 5xx (or the connection drops)."""

WEB_BACKOFF_SECONDS: Final = 0.5
"""First wait between tries after a 5xx; doubled each time."""

WEB_MAX_RETRY_AFTER_SECONDS: Final = 30.0
"""A site's Retry-After is obeyed up to this; longer waits fail the page for this sync."""

SYNC_LEASE_SECONDS: Final = 900
"""How long a process holds a source's sync lease; a process that died frees it after this."""

STALE_NOTE_ACTIVE_DAYS: Final = 14
"""Threads active within this many days get a note when a version they cited changes."""

STALE_NOTE_ATTEMPTS: Final = 5
"""Tries to post one stale note before it is marked failed."""

STALE_NOTE_CLAIM_SECONDS: Final = 120
"""How long a serving process holds the notes it claimed before another may take them."""

STALE_NOTE_POLL_SECONDS: Final = 10.0
"""How often a serving process looks for notes to deliver."""

STALE_NOTE_BATCH: Final = 20
"""Notes one process claims at a time."""

SOURCE_STALE_HOURS: Final = 24
"""A source without a successful sync for this long is shown as stale (report, admin views)."""

REMOTE_MAX_ITEMS: Final = 20_000
"""Pages, attachments or files one Confluence or SharePoint source may hold; the rest are left
out with a note (a mistyped space or a whole tenant's drive cannot flood the catalog)."""

CONFLUENCE_PAGE_LIMIT: Final = 100
"""Results asked for per Confluence listing request (Cloud allows up to 250 with bodies,
Data Center caps expanded bodies lower; the `next` link is followed either way)."""

MEMBERSHIP_CACHE_SECONDS: Final = 900
"""How long a user's groups (Entra ID, Slack user groups) are reused before they are asked
again: a removed member keeps group-scoped collections at most this long."""

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
