"""SqliteMemoryAdapter-compatible memory (praisonaiagents 1.7.17 ``memory/adapters/sqlite_adapter.py``).

Files live beside the FileMemory base, in ``<cwd>/.praisonai/``:
``short_term[_<user>].db`` and ``long_term[_<user>].db``, one table each
(``short_term_memory`` / ``long_term_memory``). A blank user id maps to the
unsuffixed files, which a ``Memory(provider="sqlite")`` without a ``user_id``
uses. Rows are written as the adapter writes them (metadata is ``json.dumps``
with its default ASCII escaping, the user's id included), and searched with the
adapter's own SQL. Readers open the files read-only and never create them;
writers create the table with the adapter's exact DDL.

praisonaiagents ≤ 1.7.0 kept every user in the unsuffixed files, telling them
apart only by ``metadata.user_id``; 1.7.1+ opens ``<tier>_<user>.db`` for a named
user and never looks there. :meth:`SqliteMemoryStore.shared` reads a user's rows
in those files (when the user has no file of its own), and :func:`plan_split`
copies them into the per-user files 1.7.17 reads, leaving the shared files as
they are.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from praisonmem.core.errors import UsageError
from praisonmem.core.io.sqlite import (connect_committed, connect_ro, connect_rw, require_store_tables, roll_back_journal,
                                       delete_in, translate, vacuum_clean)

TABLES = {"short_term": "short_term_memory", "long_term": "long_term_memory"}
COLUMNS = ("id", "content", "metadata", "timestamp")  # the adapter's table, each tier's the same
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has", "have", "how",
    "i", "in", "is", "it", "me", "my", "of", "on", "or", "the", "to", "was", "were", "what", "when", "where",
    "which", "who", "why", "with", "you", "your",
})
_DDL = """
                    CREATE TABLE IF NOT EXISTS {table} (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        content TEXT NOT NULL,
                        metadata TEXT,
                        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP
                    )
                """


def user_suffix(user_id: str | None) -> str:
    """``Memory._path_safe_suffix``: blank means no suffix; separators and ``..`` are refused."""
    if not user_id:
        return ""
    if ".." in user_id or "/" in user_id or "\\" in user_id or "\x00" in user_id:
        raise UsageError(f"user_id must not contain path separators or parent references, got '{user_id}'")
    safe = "".join(c if (c.isalnum() or c in "-_.") else "_" for c in user_id.strip())
    return f"_{safe}" if safe else ""


def metadata_user_id(raw: Any) -> str | None:
    try:
        metadata = json.loads(raw) if raw else {}
        if isinstance(metadata, dict) and metadata.get("user_id") is not None:
            return str(metadata["user_id"])
    except (TypeError, ValueError):
        pass
    return None


class SqliteMemoryStore:
    def __init__(self, project_dir: Path, user_id: str | None = "default", *, timeout: float = 5.0,
                 suffix: str | None = None) -> None:
        self.user_id = user_id or ""
        suffix = user_suffix(self.user_id) if suffix is None else suffix
        self.files = {tier: Path(project_dir) / f"{tier}{suffix}.db" for tier in TABLES}
        self.timeout = timeout

    @classmethod
    def shared(cls, project_dir: Path, user_id: str, *, timeout: float = 5.0) -> SqliteMemoryStore | None:
        """The user's rows in the unsuffixed files (praisonaiagents ≤ 1.7.0), when the user has no file of its
        own and a shared one exists; ``None`` otherwise."""
        own = cls(project_dir, user_id, timeout=timeout)
        if not own.scoped or any(path.exists() for path in own.files.values()):
            return None
        shared = cls(project_dir, user_id, timeout=timeout, suffix="")
        return shared if any(path.is_file() for path in shared.files.values()) else None

    @property
    def scoped(self) -> bool:
        """Rows of a named user carry ``metadata.user_id`` and searches filter on it."""
        return bool(self.user_id)

    def store(self, tier: str, text: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        meta = dict(metadata or {})
        if self.scoped:
            meta.setdefault("user_id", self.user_id)
        path = self.files[tier]
        conn = connect_rw(path, self.timeout)
        try:
            _recognise(conn, path, tier)
            with conn:
                conn.execute(_DDL.format(table=TABLES[tier]))
            with conn:
                cursor = conn.execute(f"INSERT INTO {TABLES[tier]} (content, metadata) VALUES (?, ?)",
                                      (text, json.dumps(meta)))
            row = conn.execute(f"SELECT id, content, metadata, timestamp FROM {TABLES[tier]} WHERE id = ?",
                               (cursor.lastrowid,)).fetchone()
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()
        return _row(row)

    def rows(self, tier: str, *, committed: bool = False) -> list[tuple[int, str, Any, Any]]:
        """Every row of a tier as stored, ``(id, content, metadata, timestamp)`` in id order, of all users. With
        ``committed``, a file a killed writer left a hot journal beside is read as rolling it back leaves it
        (a private copy: nothing here changes), as a writer planning to add rows must see it."""
        path = self.files[tier]
        if not path.is_file():
            return []
        conn = (connect_committed if committed else connect_ro)(path, self.timeout)
        try:
            _recognise(conn, path, tier)
            return conn.execute(f"SELECT id, content, metadata, timestamp FROM {TABLES[tier]} ORDER BY id").fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise translate(exc, path, self.timeout) from exc
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()

    def add_rows(self, tier: str, rows: list[tuple[str, Any, Any]]) -> int:
        """Copy rows ``(content, metadata, timestamp)`` in, as stored (their own time kept), in one ``BEGIN
        IMMEDIATE`` transaction; a row already there as it is (the same three values) is not copied again.
        Creates the file and table as the adapter does; the number of rows added."""
        path = self.files[tier]
        roll_back_journal(path, self.timeout)  # a copy killed mid-way: SQLite puts its pages back first
        conn = connect_rw(path, self.timeout)
        conn.isolation_level = None
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                _recognise(conn, path, tier)
                conn.execute(_DDL.format(table=TABLES[tier]))
                present = Counter(conn.execute(f"SELECT content, metadata, timestamp FROM {TABLES[tier]}"))
                added = 0
                for row in rows:
                    if present[row] > 0:
                        present[row] -= 1
                        continue
                    conn.execute(f"INSERT INTO {TABLES[tier]} (content, metadata, timestamp) VALUES (?, ?, ?)", row)
                    added += 1
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()
        return added

    def search(self, tier: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """The adapter's ``_execute_search``: phrase or any significant word; phrase, words, recency."""
        path = self.files[tier]
        if not path.is_file():
            return []
        terms = list(dict.fromkeys(w for w in re.findall(r"\w+", (query or "").lower())
                                   if w not in STOP_WORDS))[:32]
        patterns = [f"%{query}%"] + [f"%{t}%" for t in terms]
        match = " OR ".join(["content LIKE ?"] * len(patterns))
        score = " + ".join(["(content LIKE ?)"] * len(terms)) + " DESC, " if terms else ""
        user_filter = " AND memory_user_id(metadata) = ?" if self.scoped else ""
        params = patterns + ([self.user_id] if self.scoped else []) + patterns + [limit]
        conn = connect_ro(path, self.timeout)
        try:
            _recognise(conn, path, tier)
            conn.create_function("memory_user_id", 1, metadata_user_id, deterministic=True)
            rows = conn.execute(
                f"SELECT id, content, metadata, timestamp FROM {TABLES[tier]} WHERE ({match}){user_filter} "
                f"ORDER BY (content LIKE ?) DESC, {score}timestamp DESC LIMIT ?", params).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise translate(exc, path, self.timeout) from exc
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()
        return [_row(r) for r in rows]

    def all(self, tier: str) -> list[dict[str, Any]]:
        return self.search(tier, "", limit=-1)

    def _modify(self, tier: str, sql: str, params: tuple = ()) -> int:
        """Run one write on a tier's table; 0 rows when its file or table does not exist yet."""
        path = self.files[tier]
        if not path.is_file():
            return 0
        conn = connect_rw(path, self.timeout)
        try:
            _recognise(conn, path, tier)
            with conn:
                return conn.execute(sql.format(table=TABLES[tier]), params).rowcount
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise translate(exc, path, self.timeout) from exc
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()

    def delete(self, memory_id: str, tier: str | None = None) -> list[str]:
        """Delete by id in one tier or both (ids number independently per tier); the tiers it hit."""
        return [name for name in ((tier,) if tier else tuple(TABLES))
                if self._modify(name, "DELETE FROM {table} WHERE id = ?", (memory_id,))]

    def reset(self, tier: str) -> None:
        self._modify(tier, "DELETE FROM {table}")


    def erase(self, tier: str, ids: list[int]) -> tuple[int, list[str]]:
        """Forget's delete: the rows with these ids removed in one ``BEGIN IMMEDIATE`` with ``secure_delete`` on
        (their cells zeroed), then a WAL checkpointed and emptied and the file vacuumed when free pages still
        hold bytes an earlier delete left; the rows removed (0: gone already, or no file) and what could not be
        scrubbed, as notes. A rerun after a kill finds the rows gone and scrubs what is left."""
        path = self.files[tier]
        if not path.is_file():
            return 0, []
        roll_back_journal(path, self.timeout)  # a delete killed mid-way: SQLite puts its pages back first
        conn = connect_rw(path, self.timeout)
        conn.isolation_level = None
        try:
            _recognise(conn, path, tier)
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                removed = 0
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                (TABLES[tier],)).fetchone():
                    removed = delete_in(conn, TABLES[tier], "id", ids)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return removed, vacuum_clean(conn, path)
        except sqlite3.Error as exc:
            raise translate(exc, path, self.timeout) from exc
        finally:
            conn.close()


def _recognise(conn: sqlite3.Connection, path: Path, tier: str) -> None:
    """The tier's table, when there is one, is the adapter's: a real table with its columns, no trigger on it."""
    require_store_tables(conn, path, {TABLES[tier]: COLUMNS})


def _row(row: tuple) -> dict[str, Any]:
    return {"id": str(row[0]), "text": row[1], "metadata": _metadata(row[2]), "timestamp": row[3]}


def _metadata(raw: Any) -> Any:
    """The row's metadata; text that is not JSON is shown as stored rather than failing."""
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def users(project_dir: Path) -> list[str]:
    """The user suffixes of the SQLite memory files (``""`` for the unsuffixed ones)."""
    found = set()
    if not project_dir.is_dir():
        return []
    for path in project_dir.glob("*_term*.db"):
        for tier in TABLES:
            if path.name == f"{tier}.db":
                found.add("")
            elif path.name.startswith(f"{tier}_") and path.name.endswith(".db"):
                found.add(path.name[len(tier) + 1: -3])
    return sorted(found)
