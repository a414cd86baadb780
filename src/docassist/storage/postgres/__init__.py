"""The PostgreSQL store (psycopg 3 and its pool): the SQLite store's protocols on a database
that several replicas share."""

from docassist.storage.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
