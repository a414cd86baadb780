"""Every numeric limit of the stores (SQLite and PostgreSQL), the indexer and the search
indexes, named once."""

from typing import Final

BM25_SIMILARITY_THRESHOLD: Final = 0.2
"""BM25 score = share of the question's word stems in the chunk (0..1); see storage.search."""

DENSE_SIMILARITY_THRESHOLD: Final = 0.2
"""Cosine similarity (-1..1) for the dense and hybrid retrievers. Measured with USE: the best
chunk of off-topic questions scores at most 0.16 (demo) / 0.19 (Python HOWTOs); 90% / 100%
of answerable questions score above 0.2. See docs/retrieval.md."""

HYBRID_BM25_WEIGHT: Final = 1.0
"""Weight of a BM25 vote in the fusion (dense has 1.0)."""

EMBED_BATCH: Final = 32
"""Chunks embedded per call while indexing."""

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
inbox batch that PostgreSQL cancelled as a deadlock (postgres/connection.py: _write_retried)."""

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

STALE_NOTE_ATTEMPTS: Final = 5
"""Tries to post one stale note before it is marked failed."""
