"""Learn stores in ``learn.db`` (``LearnConfig(backend="sqlite")``: praisonaiagents' ``SQLiteBackend``).

The library keeps every store as one row of the table ``learn_store`` (``key TEXT PRIMARY KEY, data TEXT NOT
NULL, created_at REAL, updated_at REAL``, both epoch seconds set by SQLite): ``key`` is the store's name
(``persona``), ``data`` its object as ``json.dumps(data, default=str, ensure_ascii=False)``. Neither the user id
nor the scope reaches the row, so every user and scope of one database shares each store. The file is
``LearnConfig.db_url`` (a ``sqlite:///`` prefix stripped, ``~`` expanded, a relative path relative to the cwd)
or ``<store_path or 'learn'>/learn.db``.

Reading opens it read-only without changing a byte (:func:`praisonmem.core.io.sqlite.connect_ro`) and never
creates it or its table. A write is the library's own upsert (``INSERT … ON CONFLICT(key) DO UPDATE``, the same
``updated_at``) inside one ``BEGIN IMMEDIATE`` that first re-reads the row, with ``secure_delete`` on; a row that
does not parse is refused, never overwritten (the library would read it as an empty store). A write that removed
text then checkpoints the WAL and vacuums when free pages still hold old bytes, so no deleted entry's text stays
in the files. That write commits, with its change, a row :data:`SCRUB_KEY` (the library loads only its stores'
keys), removed once the scrub is done: a write killed in between leaves it, and the next praisonmem write on the
database finishes the scrub first. A view, a trigger or missing columns where ``learn_store`` should be are
refused (exit 4).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, UsageError
from praisonmem.core.io.sqlite import connect_existing, connect_ro, dirty_free_pages, require_store_tables, translate
from praisonmem.core.learn.model import STORES, Edit, Entry, check_names, serialise, sorted_entries, store_object

TABLE = "learn_store"
COLUMNS = ("key", "data", "created_at", "updated_at")
FILE_NAME = "learn.db"
URL_PREFIX = "sqlite:///"
# SQLiteBackend.save's statement, word for word in effect: the row's updated_at is SQLite's clock, as the library's
# A learn_store row praisonmem keeps while an entry's earlier text may still sit in old page versions (the main file
# before a checkpoint, -wal, free pages); "{}" so that a reader of every row sees an empty object.
SCRUB_KEY = "praisonmem:scrub_pending"
UPSERT = (f'INSERT INTO "{TABLE}" (key, data, updated_at) VALUES (?, ?, strftime(\'%s\', \'now\')) '
          "ON CONFLICT(key) DO UPDATE SET data = excluded.data, updated_at = strftime('%s', 'now')")


LEARN_TABLES = {TABLE: COLUMNS}  # the library's schema, as a backup or check expects it


def inspect_db(path: Path) -> tuple[dict[str, Any], list[str], bool]:
    """``check``'s look at a ``learn.db`` (read-only, no byte changed): each store's object, what does not parse,
    and whether a praisonmem write left its scrub unfinished (:data:`SCRUB_KEY`). A file that is not the library's
    database raises as a read does."""
    backend = SqliteBackend(path)
    rows = backend.rows()
    stores: dict[str, Any] = {}
    unreadable: list[str] = []
    for key, raw in rows.items():
        if key in STORES:
            try:
                stores[key] = store_object(raw, backend._where(key))
            except ValueError as exc:
                unreadable.append(str(exc))
    return stores, unreadable, SCRUB_KEY in rows


def db_path(text: str) -> Path:
    """``--db``: a path or ``sqlite:///PATH``, read as the library reads ``db_url`` (the prefix stripped, nothing
    unquoted, ``~`` expanded)."""
    if text.startswith(URL_PREFIX):
        text = text[len(URL_PREFIX):]
    elif "://" in text:
        raise UsageError(f"--db takes a learn.db path or sqlite:///PATH, not {text.split('://', 1)[0]}://")
    if not text:
        raise UsageError("--db names no file")
    return Path(os.path.expanduser(text))


def holds_store(path: Path) -> bool:
    """Whether an auto-detected ``learn.db`` is the library's (something by the name ``learn_store`` is in it); a
    database of another program is none of the learn command's business. Read-only."""
    conn = connect_ro(path)
    try:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE lower(name) = ? OR lower(tbl_name) = ?",
                            (TABLE, TABLE)).fetchone() is not None
    except sqlite3.Error as exc:
        raise translate(exc, path, 5.0) from exc
    finally:
        conn.close()


def _require(conn: sqlite3.Connection, db: Path, then: str) -> None:
    require_store_tables(conn, db, {TABLE: COLUMNS}, (TABLE,), then=then)


class SqliteBackend:
    """One ``learn.db``."""

    kind = "sqlite"

    def __init__(self, db: Path) -> None:
        self.db = db

    def __str__(self) -> str:
        return str(self.db)

    def rows(self) -> dict[str, bytes]:
        """Every row's ``data`` as stored, by key, from one read-only snapshot."""
        conn = connect_ro(self.db)
        try:
            _require(conn, self.db, "nothing read")
            return {key: data or b"" for key, data in
                    conn.execute(f'SELECT key, CAST(data AS BLOB) FROM "{TABLE}" ORDER BY key')}
        except sqlite3.Error as exc:
            raise translate(exc, self.db, 5.0) from exc
        finally:
            conn.close()

    def _where(self, key: str) -> str:
        return f"{self.db}: the '{key}' row of {TABLE}"

    def entries(self, store: str | None = None, scope: str | None = None,
                user_id: str | None = None) -> tuple[list[Entry], list[str]]:
        check_names(store)
        found: list[Entry] = []
        unreadable: list[str] = []
        for key, raw in self.rows().items():
            if store is not None and key != store:
                continue
            try:
                found += self.entries_of(key, raw)
            except ValueError as exc:
                unreadable.append(str(exc))
        return found, unreadable

    def entries_of(self, key: str, raw: bytes) -> list[Entry]:
        """One row's entries (none for a key that is no store's); ``ValueError`` for a value that does not parse."""
        if key not in STORES:
            return []
        data = store_object(raw, self._where(key))
        return sorted_entries([Entry(None, None, key, self.db, e, self.kind, key)
                               for e in data.values() if isinstance(e, dict)])

    def where(self, store: str, scope: str, user_id: str) -> str:
        return f"{self.db} ({TABLE} '{store}')"

    def count(self, store: str, scope: str, user_id: str) -> int:
        check_names(store)
        raw = self.rows().get(store)
        return 0 if raw is None else len(self._parse(raw, store))

    def _parse(self, raw: bytes, key: str) -> dict[str, Any]:
        try:
            return store_object(raw, self._where(key))
        except ValueError as exc:
            raise CorruptFile(str(self.db), f"{str(exc).split(': ', 1)[1]}; not overwritten") from None

    def edit(self, store: str, scope: str, user_id: str, change: Edit, timeout: float, *,
             create: bool = True) -> list[str]:
        """See :class:`~praisonmem.core.learn.model.LearnBackend`; what could not be scrubbed, as notes."""
        check_names(store)
        conn = connect_existing(self.db, timeout)  # never creates the file
        try:
            _require(conn, self.db, "nothing changed")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA secure_delete=ON")  # what the write frees is zeroed, not left in free space
            conn.execute("BEGIN IMMEDIATE")
            try:
                pending = scrub_pending(conn)  # a killed write's scrub, finished below whatever this one does
                row = conn.execute(f'SELECT CAST(data AS BLOB) FROM "{TABLE}" WHERE key = ?', (store,)).fetchone()
                data = {} if row is None else self._parse(row[0] or b"", store)
                if (row is None and not create) or not change(data):
                    conn.execute("ROLLBACK")
                    return finish_scrub(conn, self.db) if pending else []
                conn.execute(UPSERT, (store, serialise(data).decode("utf-8")))
                if row is not None:  # the row's earlier text must not linger: marked until it is scrubbed
                    conn.execute(UPSERT, (SCRUB_KEY, "{}"))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return finish_scrub(conn, self.db) if row is not None or pending else []
        except sqlite3.Error as exc:
            raise translate(exc, self.db, timeout) from exc
        finally:
            conn.close()


def scrub_pending(conn: sqlite3.Connection) -> bool:
    """Whether a praisonmem write was killed before it scrubbed what it removed (:data:`SCRUB_KEY` is there)."""
    return conn.execute(f'SELECT 1 FROM "{TABLE}" WHERE key = ?', (SCRUB_KEY,)).fetchone() is not None


def finish_scrub(conn: sqlite3.Connection, db: Path) -> list[str]:
    """:func:`scrub`, then the marker removed (and its own page version checkpointed away); the marker stays
    when the scrub could not be finished (a reader held the WAL), so the next write tries again."""
    notes = scrub(conn, db)
    if not notes:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f'DELETE FROM "{TABLE}" WHERE key = ?', (SCRUB_KEY,))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the marker's page: it holds no entry's text
    return notes


def scrub(conn: sqlite3.Connection, db: Path) -> list[str]:
    """After a committed change of a row: copy the WAL back and empty it, so the row's old text is in no frame,
    and vacuum when free pages still hold bytes a writer freed without zeroing them. What could not be done
    (a reader holding an old snapshot keeps the WAL), as notes."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # first: the free-page count reads the main file
    if dirty_free_pages(db):
        conn.execute("PRAGMA temp_store=MEMORY")  # VACUUM's copy stays in memory, not in a temp file
        conn.execute("VACUUM")
    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy or frames != copied:
        return [f"another process was reading {db.name}, so its -wal keeps the earlier text of the row until the "
                "next checkpoint (the library checkpoints as it writes and when it exits)"]
    return []
