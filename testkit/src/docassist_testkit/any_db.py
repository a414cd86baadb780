"""Reading a test's database directly, whichever store it is: an SQLite file path or a
`postgresql://` URL (SQLite's `?` placeholders in both)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def rows(db: Path | str, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    if str(db).startswith(("postgresql://", "postgres://")):
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(str(db), row_factory=dict_row) as connection:
            return list(connection.execute(sql.replace("?", "%s"), params or []).fetchall())
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute(sql, params or []).fetchall()]


def unclaimed_and_done(db: Path | str) -> bool:
    """Every inbox event finished and no claim left (the replica tests' end state)."""
    left: int = rows(db, "SELECT count(*) AS n FROM inbox WHERE status != 'done' "
                         "OR claimed_by IS NOT NULL")[0]["n"]
    return left == 0
