"""What a ``sessions_index.db`` holds, read from a private copy (so the home itself is never touched).

FTS5 keeps lower-cased, prefix-compressed terms in its segments: a raw grep for a mixed-case token
cannot tell whether its words survive there, so :func:`terms` lists them (fts5vocab) and
:func:`matching` runs a MATCH, both on a copy of the database and its ``-wal``.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def copy_of(db: Path) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / db.name
        shutil.copyfile(db, copy)
        if Path(f"{db}-wal").exists():
            shutil.copyfile(f"{db}-wal", f"{copy}-wal")
        conn = sqlite3.connect(copy)
        try:
            yield conn
        finally:
            conn.close()


def rows(db: Path) -> dict[str, object]:
    """Every row of the four tables, keyed by table (FTS5 content read through the table itself)."""
    with copy_of(db) as conn:
        return {
            "fts": sorted(conn.execute("SELECT session_id, content FROM session_fts")),
            "meta": sorted(conn.execute("SELECT session_id, updated_at FROM session_meta")),
            "route": sorted(conn.execute("SELECT * FROM session_route")),
            "index_meta": sorted(conn.execute("SELECT * FROM session_index_meta")),
        }


def terms(db: Path) -> set[str]:
    """Every term in the FTS5 index (fts5vocab), deleted rows' terms included until segments merge."""
    with copy_of(db) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, session_fts, row)")
        return {r[0] for r in conn.execute("SELECT term FROM temp.vocab")}


def matching(db: Path, query: str) -> list[str]:
    with copy_of(db) as conn:
        return sorted(r[0] for r in conn.execute("SELECT session_id FROM session_fts WHERE session_fts MATCH ?",
                                                 (query,)))


def integrity(db: Path) -> tuple[str, str]:
    """SQLite's integrity_check and FTS5's own."""
    with copy_of(db) as conn:
        sqlite_ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.execute("INSERT INTO session_fts(session_fts, rank) VALUES('integrity-check', 1)")
        return sqlite_ok, "ok"


def holding(root: Path, needle: bytes) -> list[str]:
    """Files under ``root`` (sidecars included) whose raw bytes contain ``needle``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())
