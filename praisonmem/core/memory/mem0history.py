"""mem0's history database (``--provider mem0-history``): ``$MEM0_DIR/history.db``, default ``~/.mem0/history.db``.

mem0ai's ``SQLiteManager`` (``mem0/memory/storage.py``) keeps two tables there: ``history`` (``id`` a uuid4,
``memory_id``, ``old_memory``, ``new_memory``, ``event`` ADD/UPDATE/DELETE, ``created_at`` and ``updated_at`` ISO
text, ``is_deleted`` 0/1, ``actor_id``, ``role``), one row per change of a memory, and ``messages`` (the last ten
messages of each session scope). It writes each change as ``BEGIN`` … ``COMMIT`` on one connection in the default
rollback-journal mode. No column names a user: a memory's user is in mem0's vector store, not here.

A DELETE row keeps the deleted memory's text in ``old_memory``, and an UPDATE row its earlier text, so
forgetting a text means deleting its history events. This provider lists and searches the events (read-only,
changing no byte: :func:`praisonmem.core.io.sqlite.connect_ro`), and deletes them: one event by its id, or every
event of a memory by its ``memory_id``, in one ``BEGIN IMMEDIATE`` (which waits for mem0's own writer as its
``BEGIN`` waits for ours) with ``secure_delete`` on, so the freed cells are zeroed; then it checkpoints a WAL and
vacuums when free pages still hold bytes an earlier writer freed without zeroing them. It never stores (mem0
writes its history itself), never creates the file or a table, and refuses a database whose ``history`` table is
missing, lacks mem0's columns, or is a view or has a trigger (exit 4).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import UsageError
from praisonmem.core.memory.providers import Provider, Unsupported
from praisonmem.core.io.safetext import plural

if TYPE_CHECKING:
    import sqlite3

    from praisonmem.core.paths import Paths

HISTORY = "history"
MESSAGES = "messages"
HISTORY_COLUMNS = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
                   "is_deleted", "actor_id", "role")
MESSAGE_COLUMNS = ("id", "session_scope", "role", "content", "name", "created_at")
FILE_NAME = "history.db"
TABLES = {HISTORY: HISTORY_COLUMNS, MESSAGES: None}  # messages is checked only for what would run in it
# get_history's order, for every memory at once (rowid: the order of insertion, for rows equal on both)
SELECT = (f"SELECT {', '.join(HISTORY_COLUMNS)} FROM {HISTORY} {{where}}"
          "ORDER BY created_at ASC, DATETIME(updated_at) ASC, rowid ASC")
# The event whose id is the key, else every event of the memory the key names (ids are uuid4s: never both).
MATCH = "WHERE id = ? OR (memory_id = ? AND NOT EXISTS (SELECT 1 FROM history WHERE id = ?)) "


def default_db() -> Path:
    """Where mem0 keeps it: ``$MEM0_DIR/history.db``, else ``~/.mem0/history.db`` (``mem0.configs.base``)."""
    base = os.environ.get("MEM0_DIR") or os.path.join(os.path.expanduser("~"), ".mem0")
    return Path(base) / FILE_NAME


def db_path(text: str | None) -> Path:
    """``--db PATH`` (``~`` expanded), or :func:`default_db`."""
    if text is None:
        return default_db()
    if not text:
        raise UsageError("--db names no file")
    if "://" in text:
        raise UsageError(f"--db takes the path of mem0's history.db, not a {text.split('://', 1)[0]}:// URL")
    return Path(os.path.expanduser(text))


def event(row: tuple[Any, ...]) -> dict[str, Any]:
    """One row as ``SQLiteManager.get_history`` returns it (``is_deleted`` a bool)."""
    out = dict(zip(HISTORY_COLUMNS, row))
    out["is_deleted"] = bool(out["is_deleted"])
    return out


class HistoryDb:
    """One ``history.db``: its events read, and deleted as described above."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout

    def _require(self, conn: sqlite3.Connection, then: str) -> None:
        from praisonmem.core.io.sqlite import require_store_tables

        require_store_tables(conn, self.path, TABLES, (HISTORY,), then=then)

    def events(self, where: str = "", args: tuple[Any, ...] = (), *, committed: bool = False) -> list[dict[str, Any]]:
        """The events (``committed``: as rolling back a killed writer's hot journal leaves them, read from a private
        copy, as a writer planning a delete must see them; nothing here changes either way)."""
        import sqlite3

        from praisonmem.core.io.sqlite import connect_committed, connect_ro, translate

        conn = (connect_committed if committed else connect_ro)(self.path, self.timeout)
        try:
            self._require(conn, "nothing read")
            return [event(r) for r in conn.execute(SELECT.format(where=where), args)]
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()

    def matching(self, key: str) -> list[dict[str, Any]]:
        """The event whose id is ``key``, else every event of the memory ``key``."""
        return self.events(MATCH, (key, key, key))

    def delete(self, key: str) -> tuple[list[dict[str, Any]], list[str]]:
        """Delete what :meth:`matching` finds, re-read inside the transaction; the rows deleted and what could not
        be scrubbed (as notes)."""
        import sqlite3

        from praisonmem.core.io.sqlite import connect_existing, translate

        conn = connect_existing(self.path, self.timeout)  # never creates the file
        try:
            self._require(conn, "nothing changed")
            conn.execute("PRAGMA secure_delete=ON")  # the deleted text's cells are zeroed, not left in free space
            conn.execute("BEGIN IMMEDIATE")
            try:
                found = [event(r) for r in conn.execute(SELECT.format(where=MATCH), (key, key, key))]
                if found:
                    conn.executemany(f"DELETE FROM {HISTORY} WHERE id = ?", [(e["id"],) for e in found])
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return found, scrub(conn, self.path) if found else []
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()


    def messages(self, *, committed: bool = False) -> list[dict[str, Any]]:
        """Every row of ``messages`` (the last messages of each session scope), read-only (``committed``: as for
        :meth:`events`); none when mem0 has not created the table, or it lacks mem0's columns."""
        import sqlite3

        from praisonmem.core.io.sqlite import connect_committed, connect_ro, translate

        conn = (connect_committed if committed else connect_ro)(self.path, self.timeout)
        try:
            self._require(conn, "nothing read")
            if not self._has_messages(conn):
                return []
            return [dict(zip(MESSAGE_COLUMNS, r)) for r in
                    conn.execute(f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM {MESSAGES} ORDER BY rowid")]
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()

    @staticmethod
    def _has_messages(conn: sqlite3.Connection) -> bool:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MESSAGES,)).fetchone():
            return False
        return set(MESSAGE_COLUMNS) <= {r[1] for r in conn.execute(f"PRAGMA table_info({MESSAGES})")}

    def erase(self, history_ids: list[str], message_ids: list[str]) -> tuple[int, list[str]]:
        """Forget's delete: these ``history`` events and ``messages`` rows removed by id in one ``BEGIN
        IMMEDIATE`` with ``secure_delete`` on, then the WAL emptied and the file vacuumed whatever its free pages
        look like (:func:`praisonmem.core.io.sqlite.vacuum_clean`). Rows gone already count for nothing, and the
        scrub runs again, so a rerun after a kill finishes the job. The rows removed, and notes."""
        import sqlite3

        from praisonmem.core.io.sqlite import connect_existing, delete_in, roll_back_journal, translate, vacuum_clean

        roll_back_journal(self.path, self.timeout)  # a delete killed mid-way: SQLite puts its pages back first
        conn = connect_existing(self.path, self.timeout)  # never creates the file
        try:
            self._require(conn, "nothing changed")
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                removed = 0
                tables = [(HISTORY, history_ids)]
                if message_ids and self._has_messages(conn):
                    tables.append((MESSAGES, message_ids))
                for table, ids in tables:
                    removed += delete_in(conn, table, "id", ids)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return removed, vacuum_clean(conn, self.path)
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()


def scrub(conn: sqlite3.Connection, db: Path) -> list[str]:
    """After the delete: copy a WAL back and empty it, vacuum when free pages hold bytes a writer freed without
    zeroing them (mem0's own deletes of old messages run without ``secure_delete``); what remains, as notes."""
    from praisonmem.core.io.sqlite import vacuum_clean

    return vacuum_clean(conn, db, always=False)


def texts(path: Path, timeout: float = 5.0) -> list[tuple[str, dict[str, Any]]]:
    """Every text of the database, read-only, for ``check --secrets``: ``("history/<id>", {old_memory, new_memory})``
    per event, then ``("messages/<id>", {content})`` per kept message."""
    import sqlite3

    from praisonmem.core.io.sqlite import connect_ro, translate

    db = HistoryDb(path, timeout)
    conn = connect_ro(path, timeout)
    try:
        db._require(conn, "nothing read")
        found = [(f"{HISTORY}/{i}", {"old_memory": old, "new_memory": new})
                 for i, old, new in conn.execute(f"SELECT id, old_memory, new_memory FROM {HISTORY} ORDER BY rowid")]
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MESSAGES,)).fetchone():
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({MESSAGES})")}
            if {"id", "content"} <= have:
                found += [(f"{MESSAGES}/{i}", {"content": content})
                          for i, content in conn.execute(f"SELECT id, content FROM {MESSAGES} ORDER BY rowid")]
        return found
    except sqlite3.Error as exc:
        raise translate(exc, path, timeout) from exc
    finally:
        conn.close()


class Mem0HistoryProvider(Provider):
    """``--provider mem0-history``: the events of mem0's ``history.db`` (type ``history``)."""

    name = "mem0-history"
    supports = ["search", "list", "delete"]
    kinds = (HISTORY,)
    user_id = ""

    def __init__(self, db: Path, timeout: float) -> None:
        self.db = HistoryDb(db, timeout)
        self.notes = ()

    @classmethod
    def open(cls, paths: Paths, user_id: str | None, timeout: float, db: str | None = None) -> Mem0HistoryProvider:
        return cls(db_path(db), timeout)

    def scope(self) -> str:
        return f"in {self.db.path}"  # the database names no user

    def types(self, values: list[str] | None) -> list[str]:
        if values:
            raise Unsupported(f"provider '{self.name}' holds memory events only: --type does not apply; nothing read")
        return [HISTORY]

    def fields(self, item: dict[str, Any]) -> dict[str, Any]:
        """What ``--filter`` compares: the event's own columns (an unknown column is a usage error)."""
        return item

    def check_filters(self, filters: dict[str, str]) -> None:
        unknown = [k for k in filters if k not in HISTORY_COLUMNS]
        if unknown:
            raise UsageError(f"--filter {unknown[0]}: mem0's history has no such column (it has "
                             f"{', '.join(HISTORY_COLUMNS)})")

    def _list(self, types):
        return [{"type": HISTORY, "item": e} for e in self.db.events()]

    def _search(self, query, types, limit):
        from praisonmem.core.memory.search import score_match

        query_lower = query.lower()
        words = set(query_lower.split())
        hits = []
        for e in self.db.events():
            score = max(score_match(text, query_lower, words) if isinstance(text, str) else 0.0
                        for text in (e["old_memory"], e["new_memory"]))
            if score > 0:
                hits.append({"type": HISTORY, "score": score, "item": e})
        hits.sort(key=lambda h: h["score"], reverse=True)
        return hits[:limit] if limit else hits

    def _locate(self, memory_id, tier):
        if tier is not None:
            raise Unsupported(f"provider '{self.name}' holds memory events only: --type does not apply; "
                              "nothing changed")
        found = self.db.matching(memory_id)
        if not found:
            return None
        return {"type": HISTORY, "id": memory_id, "events": len(found),
                "what": "event" if found[0]["id"] == memory_id else f"{plural(len(found), 'event')} of memory"}

    def _delete(self, memory_id, tier):
        found, notes = self.db.delete(memory_id)
        if not found:
            return None
        self.notes = tuple(notes)
        return {"type": HISTORY, "id": memory_id, "events": found}

    def describe(self, where: dict[str, Any]) -> str:
        """The confirmation's words for what :meth:`_locate` found."""
        if where.get("what") == "event":
            return f"history event '{where['id']}' in {self.db.path}"
        return f"{where['what']} '{where['id']}' in {self.db.path}"

