"""Schema migrations, append-only: a shipped migration is never edited."""

from __future__ import annotations

from sqlite_utils import Database, Migrations

from docassist.storage.privacy import hash_saved_users

migrations = Migrations("docassist")


@migrations()
def m001_initial(db: Database) -> None:
    db.table("documents").create(
        {
            "document_id": str,
            "title": str,
            "version": str,
            "owner": str,
            "language": str,
            "updated": str,
            "url": str,
            "source_path": str,
            "content_sha256": str,
            "chunk_count": int,
            "services": str,
            "extra": str,
            "indexed_at": str,
        },
        pk="document_id",
    )
    db.table("chunks").create(
        {
            "chunk_id": str,
            "document_id": str,
            "ordinal": int,
            "section": str,
            "header": str,
            "text": str,
        },
        pk="chunk_id",
        foreign_keys=[("document_id", "documents", "document_id")],
    )
    db.table("chunks").create_index(["document_id"])
    # Folded text (lower case, no diacritics) so queries fold the same way.
    db.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5("
        "chunk_id UNINDEXED, title, section, body, tokenize = 'unicode61')"
    )
    db.table("conversations").create(
        {
            "conversation_id": str,
            "platform": str,
            "workspace": str,
            "channel": str,
            "thread": str,
            "state": str,
            "version": int,
            "generation": int,
            "updated_at": str,
        },
        pk="conversation_id",
    )
    db.table("conversations").create_index(
        ["platform", "workspace", "channel", "thread"], unique=True
    )
    db.table("turns").create(
        {
            "result_id": str,
            "conversation_id": str,
            "generation": int,
            "turn_id": int,
            "platform": str,
            "created_at": str,
            "status": str,
            "decision_status": str,
            "decision_reason": str,
            "decided_by": str,
            "action": str,
            "tool_name": str,
            "tool_status": str,
            "error_code": str,
            "language": str,
            "question_sha256": str,
            "standalone_sha256": str,
            "answer_sha256": str,
            "resolution_status": str,
            "history_used": int,
            "source_ids": str,
            "source_turn_id": int,
            "warnings": str,
            "duration_ms": float,
            "backend": str,
            "model": str,
            "catalog_version": str,
            "prompt_sha256": str,
            "user_sha256": str,
            "event_id": str,
            "raw": str,
        },
        pk="result_id",
    )
    db.table("turns").create_index(["conversation_id", "generation", "turn_id"], unique=True)
    db.table("turns").create_index(["created_at"])
    db.table("tool_calls").create(
        {
            "id": int,
            "result_id": str,
            "conversation_id": str,
            "generation": int,
            "turn_id": int,
            "attempt": int,
            "tool_name": str,
            "status": str,
            "error_code": str,
            "arguments": str,
            "duration_ms": float,
            "created_at": str,
            "catalog_version": str,
        },
        pk="id",
    )
    db.table("tool_calls").create_index(["result_id"])
    db.table("processed_events").create(
        {"platform": str, "event_id": str, "conversation_id": str, "created_at": str},
        pk=("platform", "event_id"),
    )


@migrations()
def m002_versions_and_embeddings(db: Database) -> None:
    # Chunks of replaced versions stay (not searched) so old citations still resolve.
    db.table("chunks").add_column("superseded_at", str)
    db.table("chunks").create_index(["superseded_at"])
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("meta").insert({"key": "index_version", "value": "0"})
    db.table("embeddings").create(
        {"chunk_id": str, "model": str, "dimensions": int, "vector": bytes},
        pk=("chunk_id", "model"),
    )


@migrations()
def m003_inbox(db: Database) -> None:
    # Events are stored before the platform is acked and finished after the reply is posted,
    # so a crash in between loses nothing: on start, unfinished events are resumed.
    db.table("inbox").create(
        {
            "id": int,
            "platform": str,
            "event_id": str,
            "dedupe_key": str,
            "conversation_id": str,
            "message": str,
            "status": str,
            "result": str,
            "attempts": int,
            "error": str,
            "received_at": str,
            "finished_at": str,
        },
        pk="id",
    )
    db.table("inbox").create_index(["platform", "event_id"], unique=True)
    db.table("inbox").create_index(["platform", "dedupe_key"], unique=True)
    db.table("inbox").create_index(["status"])


@migrations()
def m004_eval_runs(db: Database) -> None:
    db.table("eval_runs").create(
        {
            "run_id": str,
            "kind": str,
            "created_at": str,
            "source": str,
            "backend": str,
            "model": str,
            "catalog_version": str,
            "total": int,
            "accuracy": float,
            "report": str,
        },
        pk="run_id",
    )


@migrations()
def m005_shadow(db: Database) -> None:
    db.table("shadow_decisions").create(
        {
            "result_id": str,
            "conversation_id": str,
            "turn_id": int,
            "created_at": str,
            "active_backend": str,
            "active_model": str,
            "active_status": str,
            "active_action": str,
            "candidate_backend": str,
            "candidate_model": str,
            "candidate_status": str,
            "candidate_action": str,
            "agree": int,
            "candidate_error": str,
            "catalog_version": str,
        },
        pk="result_id",
    )


@migrations()
def m006_feedback(db: Database) -> None:
    db.table("feedback").create(
        {"id": int, "result_id": str, "user_sha256": str, "value": int, "created_at": str},
        pk="id",
    )
    db.table("feedback").create_index(["result_id"])


@migrations()
def m007_answer_backend(db: Database) -> None:
    db.table("turns").add_column("answer_backend", str)
    db.table("turns").add_column("retriever", str)


@migrations()
def m008_one_vote_per_user_and_escalations(db: Database) -> None:
    """One vote per user per answer (the last one counts); one escalation per answer."""
    db.execute("DELETE FROM feedback WHERE id NOT IN (SELECT max(id) FROM feedback "
               "GROUP BY result_id, user_sha256)")
    db.table("feedback").create_index(["result_id", "user_sha256"], unique=True)
    db.table("escalations").create(
        {"result_id": str, "user_sha256": str, "created_at": str}, pk="result_id")
    # The kind of refusal decided at admission (external_user, rate_limited, …), NULL when
    # the event runs a turn: a refused message does not make its thread the bot's.
    db.table("inbox").add_column("refusal", str)


@migrations()
def m009_fold_keeps_short_i(db: Database) -> None:
    # Folding now keeps Russian `й` (stems need it); searchable rows holding it are folded
    # again, so stored text and queries fold alike. Later changes to folding add their own.
    from docassist.core.text import fold

    rows = list(db.query(
        "SELECT c.chunk_id, d.title, c.section, c.text FROM chunks c "
        "JOIN documents d ON d.document_id = c.document_id WHERE c.superseded_at IS NULL "
        "AND (instr(c.text, 'й') OR instr(c.text, 'Й') OR instr(d.title, 'й') "
        "OR instr(d.title, 'Й') OR instr(c.section, 'й') OR instr(c.section, 'Й'))"))
    for row in rows:
        body = row["text"].split("\n", 1)[-1]
        db.execute("DELETE FROM chunks_fts WHERE chunk_id = ?", [row["chunk_id"]])
        db.execute("INSERT INTO chunks_fts (chunk_id, title, section, body) VALUES (?, ?, ?, ?)",
                   [row["chunk_id"], fold(row["title"]), fold(row["section"]), fold(body)])
    if rows:
        db.execute("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                   "WHERE key = 'index_version'")


@migrations()
def m010_sources(db: Database) -> None:
    """Document sources (issue 20): configuration without secrets, sync state, the items a
    web source last saw (validators for conditional requests), one lease per source so one
    process syncs it at a time, and each document's source and collection."""
    db.table("sources").create(
        {
            "name": str,
            "kind": str,
            "collection": str,
            "settings": str,
            "created_at": str,
            "last_run": str,
            "last_success": str,
            "last_error": str,
            "counts": str,
            "next_run": str,
        },
        pk="name",
    )
    db.table("source_items").create(
        {
            "source": str,
            "item": str,
            "document_id": str,
            "etag": str,
            "last_modified": str,
            "links": str,
            "seen_at": str,
        },
        pk=("source", "item"),
    )
    db.table("leases").create({"name": str, "holder": str, "expires_at": str}, pk="name")
    db.table("documents").add_column("collection", str, not_null_default="default")
    db.table("documents").add_column("source", str)
    # Notes to threads whose latest answer cited a version a sync replaced or removed: pending
    # work, claimed with an expiry by the serving process that posts it. One per thread and
    # cited version (the unique index).
    db.table("stale_notes").create(
        {
            "id": int,
            "conversation_id": str,
            "platform": str,
            "workspace": str,
            "channel": str,
            "thread": str,
            "document_id": str,
            "cited_version": str,
            "title": str,
            "change": str,
            "changed_at": str,
            "status": str,
            "claimed_by": str,
            "claim_expires": str,
            "delivered_at": str,
            "attempts": int,
            "error": str,
        },
        pk="id",
    )
    db.table("stale_notes").create_index(["conversation_id", "cited_version"], unique=True)
    db.table("stale_notes").create_index(["status"])
    # Where a Teams conversation is (service URL, conversation and bot ids; no user, no text):
    # a note is posted without a user message to reply to.
    db.table("conversation_addresses").create(
        {"conversation_id": str, "reference": str, "updated_at": str}, pk="conversation_id")


@migrations()
def m011_source_sync_state(db: Database) -> None:
    """A source's own sync state as JSON (issue 21): a SharePoint source keeps its drive id
    and Graph delta link there, so the next sync asks only for what changed."""
    db.table("sources").add_column("sync_state", str)


@migrations()
def m012_chat_parity(db: Database) -> None:
    """Issue 23 (one migration for the branch): why a 👎 was given (a reason from
    `core.feedback`, and the user's words only with `save_raw`); the id of the activity a
    Teams reply was posted as (checked after a restart, so a reply is not posted twice);
    where a Teams team's channels are reached (its `serviceUrl`, from any activity or
    installation update of the team: no user, no text); private answers shared in their
    channel (one share per answer)."""
    db.table("feedback").add_column("reason", str)
    db.table("feedback").add_column("reason_text", str)
    db.table("inbox").add_column("posted_id", str)
    db.table("team_addresses").create(
        {"channel_id": str, "team_id": str, "service_url": str, "updated_at": str},
        pk="channel_id")
    db.table("shares").create({"result_id": str, "user_sha256": str, "created_at": str},
                              pk="result_id")


@migrations()
def m013_scopes(db: Database) -> None:
    """Collections and audiences (issue 22): which channels, users and groups may search
    which collections, which collections an externally shared channel may be answered from,
    the log of every change with the admin who made it, and each turn's audience and the
    collections it searched."""
    db.table("scope_mappings").create(
        {"subject": str, "collections": str, "updated_by": str, "updated_at": str},
        pk="subject")
    db.table("shareable_collections").create(
        {"collection": str, "updated_by": str, "updated_at": str}, pk="collection")
    db.table("scope_changes").create(
        {"id": int, "changed_at": str, "admin": str, "subject": str, "before": str,
         "after": str}, pk="id")
    db.table("turns").add_column("audience", str)
    db.table("turns").add_column("collections", str)


@migrations()
def m014_replicas(db: Database) -> None:
    """Several processes on one database (issues 17, 25): an inbox event is claimed by one
    process for a lease (epoch seconds; renewed while its turn runs, so a dead process's
    claims expire), and rate limits count arrivals in the store, so every process sees the
    same minute."""
    db.table("inbox").add_column("claimed_by", str)
    db.table("inbox").add_column("claim_expires", float)
    # The claim looks for the oldest unfinished event of each conversation.
    db.table("inbox").create_index(["conversation_id", "status", "id"])
    db.table("rate_arrivals").create(
        {"arrival_id": str, "user_key": str, "at": float, "retry_at": float},
        pk="arrival_id")
    db.table("rate_arrivals").create_index(["user_key", "at"])
    db.table("rate_arrivals").create_index(["at"])


@migrations()
def m015_gaps(db: Database) -> None:
    """Questions kept for `docassist gaps`: the embedding (int8 codes + scale, as chunk
    vectors) and the closest documents; the text only with save_raw. Purged with traces."""
    db.table("question_vectors").create(
        {
            "result_id": str,
            "created_at": str,
            "embedder": str,
            "dimensions": int,
            "vector": bytes,
            "document_ids": str,
            "question": str,
        },
        pk="result_id",
    )
    db.table("question_vectors").create_index(["created_at"])


@migrations()
def m016_teams(db: Database) -> None:
    """Each stale note keeps the collection of the version it is about (from the answer's
    sources, else from the sync): a note about a removed document is posted only where that
    collection may still be seen."""
    db.table("stale_notes").add_column("collection", str)


@migrations()
def m017_sched(db: Database) -> None:
    """Scheduled syncs shared by replicas: when the latest sync of a source started (its
    end is `last_run`), so a replica skips a source another one synced within the interval
    and a sync that never finished (its process died) shows."""
    db.table("sources").add_column("sync_started", str)


@migrations()
def m018_hashed_users(db: Database) -> None:
    """Conversation states keep the audience's user as a hash, not the platform's id."""
    hash_saved_users(db.conn)  # inside the migration's own transaction


@migrations()
def m019_chunking(db: Database) -> None:
    """Which chunking a document was cut with: one cut by an older one is parsed again by
    the next `index` or sync (core.documents.CHUNKING_VERSION)."""
    db.table("documents").add_column("chunking", int)
