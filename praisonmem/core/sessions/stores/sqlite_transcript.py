"""``sessions/sessions.db``: praisonaiagents' ``SqliteTranscriptStore``, the gateway's store.

One row per session: ``sessions(session_id TEXT PRIMARY KEY, data TEXT NOT NULL, agent_name,
gateway_session_id, agent_id, updated_at)``, ``data`` the whole document as
``json.dumps(doc, ensure_ascii=False)``, the other columns copies of the document's fields. A ref is a
:class:`Row` (the database and the raw session id: no file-name sanitising).

* Reading never uses the library class (its opener runs ``quick_check`` and may "repair", replace or
  delete a malformed database, converts the journal mode, creates the schema and imports JSON) and
  never opens the file read-write: :func:`praisonmem.core.io.sqlite.connect_ro` takes one snapshot of
  every row, without creating, checkpointing or recovering anything. A store instance reads once.
* Writing is the library's own protocol (``_modify_session_locked``): one ``BEGIN IMMEDIATE`` with a
  busy timeout (the library's 5000 ms, or ``--lock-timeout``), the row re-read inside it, ``data``
  serialised exactly as ``_write_row`` does, then the columns; the lock is held for milliseconds, since
  a library writer that waits longer than its own 5 s drops its turn. Nothing here creates the
  database or its table.
* A delete leaves none of the session's text on disk: ``secure_delete`` zeroes what the delete frees,
  ``VACUUM`` rewrites pages older writes left in free space (writers built without secure delete), and
  ``wal_checkpoint(TRUNCATE)`` empties ``-wal``, which holds every version ever written. A reader in
  the middle of a read stops the checkpoint: the delete stands and the record says what remains. A
  write killed after its commit and before that scrub leaves old page versions behind
  (:func:`~praisonmem.core.io.sqlite.residue`): the next write on the database finishes the scrub, and
  so does the rerun of a delete or redaction that then finds nothing left to change
  (:func:`finish_interrupted`).
* The library's one-time import of the ``*.json`` files beside the database runs whenever the table
  is empty. So while JSON session files lie beside it, the table is never emptied (the library would
  import every one of them again) and an empty table gets no first row (that would stop an import
  the library has yet to do): both are refused.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from praisonmem.core.errors import (CorruptFile, NotFound, PraisonMemError, Refused, TargetExists,
                                    UsageError)
from praisonmem.core.io import jsonfile
from praisonmem.core.io.sqlite import connect_existing, connect_ro, require_store_tables, residue, translate
from praisonmem.core.sessions.documents import validate
from praisonmem.core.sessions.stores import Fold, PlainStore, Scanned, ambiguous
from praisonmem.core.sessions.stores.names import TRANSCRIPT
from praisonmem.core.io.safetext import plural

A = TypeVar("A")
LABEL = TRANSCRIPT
TABLE = "sessions"
COLUMNS = ("session_id", "data", "agent_name", "gateway_session_id", "agent_id", "updated_at")
TABLES = {TABLE: COLUMNS}  # the store's tables and their columns, as the library creates them
# VACUUM holds the write lock while it rewrites the file (measured: 115 MB in 0.35 s here); above this a
# running gateway's turns could wait past their own 5 s and be dropped, so a larger file is not vacuumed.
VACUUM_LIMIT = 256 * 1024 * 1024


@dataclass(frozen=True, order=True)
class Row:
    """One session in ``sessions.db``: where the database is and the row's ``session_id``."""

    db: Path
    session_id: str

    def __str__(self) -> str:
        return str(self.db)


def serialise(doc: dict[str, Any]) -> str:
    """``data`` as the library's ``_write_row`` writes it: default separators, raw UTF-8, keys in order."""
    try:
        return json.dumps(doc, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"session '{doc.get('session_id')}' cannot be serialised: {exc}") from exc


def columns_of(doc: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """The copies the library keeps in columns: ``agent_name``, ``gateway_session_id``, the top-level
    ``agent_id`` (not ``metadata.agent_id``) and ``updated_at``."""
    return doc.get("agent_name"), doc.get("gateway_session_id"), doc.get("agent_id"), doc.get("updated_at")


def json_files_beside(directory: Path) -> list[str]:
    """What the library's one-time import would read: names in the directory ending in ``.json``."""
    try:
        return sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    except OSError:
        return []


class TranscriptDbStore(PlainStore):
    """The rows of one ``sessions.db``; see the module docstring."""

    label = LABEL

    def __init__(self, db: Path) -> None:
        self.db = db
        self._rows: dict[str, bytes] | None = None
        self._error: PraisonMemError | None = None

    # -------------------------------------------------------- reading

    def _snapshot(self) -> dict[str, bytes]:
        """Every row's ``data`` by session id, read once in one read transaction."""
        if self._rows is None:
            try:
                self._rows = read_rows(self.db)
            except PraisonMemError as exc:
                self._error, self._rows = exc, {}
        if self._error is not None:
            raise self._error
        return self._rows

    def ref(self, session_id: str, *, beside: Row | None = None) -> Row:
        return Row(self.db, session_id)

    def name(self, ref: Row) -> str:
        return ref.session_id

    def session_id(self, ref: Row, doc: dict[str, Any]) -> str:
        return ref.session_id  # the key the library looks it up by

    def refs(self) -> list[Row]:
        return [Row(self.db, sid) for sid in sorted(self._snapshot())]

    def exists(self, ref: Row) -> bool:
        return ref.session_id in self._snapshot()

    def absent(self) -> str | None:
        return None if self.db.is_file() else f"no database at {self.db}"

    def find(self, name: str, *, allow_prefix: bool = False) -> Row:
        rows = self._snapshot()
        if name in rows:
            return Row(self.db, name)
        if allow_prefix and name:
            matches = sorted(sid for sid in rows if sid.startswith(name))
            if len(matches) == 1:
                return Row(self.db, matches[0])
            if matches:
                raise ambiguous(name, matches, self.db)
        raise NotFound(f"no session '{name}' in {self.db}")

    def read(self, ref: Row) -> dict[str, Any]:
        return self.parse(ref, self.read_bytes(ref))

    def read_bytes(self, ref: Row) -> bytes:
        try:
            return self._snapshot()[ref.session_id]
        except KeyError:
            raise NotFound(f"no session '{ref.session_id}' in {self.db}") from None

    def parse(self, ref: Row, raw: bytes) -> dict[str, Any]:
        return validate(jsonfile.parse_object(raw, where(ref)), where(ref))

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None, memo: Any = None) -> A:
        """``fold`` over every row, read in one transaction (``memo`` is not needed: the database is read with
        SQL)."""
        try:
            rows = self._snapshot()
        except PraisonMemError as exc:
            return fold.add(fold.empty(), Scanned(str(self.db), None, None, exc, store=self.label))
        acc = fold.empty()
        for done, sid in enumerate(sorted(rows), 1):
            ref = Row(self.db, sid)
            try:
                doc = self.parse(ref, rows[sid])
            except PraisonMemError as exc:
                acc = fold.add(acc, Scanned(str(self.db), sid, None, exc, ref=ref, store=self.label))
            else:
                acc = fold.add(acc, Scanned(str(self.db), sid, doc, None, ref=ref, store=self.label))
            if progress:
                progress(done, len(rows))
        return acc

    def holds(self, ref: Row, doc: dict[str, Any]) -> bool:
        return self._snapshot().get(ref.session_id) == serialise(doc).encode("utf-8")

    def seconds_since_write(self, ref: Row, doc: dict[str, Any], now: float) -> float | None:
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    # -------------------------------------------------------- writing

    def refuse(self, *, deleting: Sequence[Row] = (), creating: Sequence[Row] = ()) -> None:
        """The library's one-time import must neither run again nor be stopped (see the module docstring)."""
        beside = json_files_beside(self.db.parent)
        if not beside or not (deleting or creating):
            return
        rows = self._snapshot()
        gone = {r.session_id for r in deleting}
        if deleting and rows and not set(rows) - gone:
            raise Refused(emptying(self.db, sorted(gone & set(rows)), beside))
        if creating and not rows:
            raise Refused(first_row(self.db, beside))

    @contextmanager
    def transaction(self, refs: Sequence[Row], timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[Transaction]:
        """One ``BEGIN IMMEDIATE`` around the changes (committed when the block ends, rolled back on an error);
        a transaction that deleted rows and wrote none then scrubs their text from the files."""
        pending = leftover(self.db)  # a killed write's scrub to finish (looked at before this connection opens)
        conn = connect_existing(self.db, timeout)
        try:
            require_table(conn, self.db)
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA secure_delete=ON")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise translate(exc, self.db, timeout) from exc
            tx = Transaction(self, conn)
            try:
                yield tx
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._rows = None  # the next read sees what was committed
            if (tx.deleted and not tx.written) or tx.scrub or pending:
                tx.notes += scrub(conn, self.db)
        except sqlite3.Error as exc:
            raise translate(exc, self.db, timeout) from exc
        finally:
            conn.close()


class Transaction:
    """Changes inside the store's ``BEGIN IMMEDIATE``: every read is a re-read under the write lock."""

    def __init__(self, store: TranscriptDbStore, conn: sqlite3.Connection) -> None:
        self.store, self.conn = store, conn
        self.notes: list[str] = []
        self.deleted = self.written = 0
        self.scrub = False  # scrub the files after committing (forget_replaced)

    def exists(self, ref: Row) -> bool:
        return self.conn.execute(f"SELECT 1 FROM {TABLE} WHERE session_id = ?", (ref.session_id,)).fetchone() is not None

    def read(self, ref: Row) -> dict[str, Any] | None:
        """The document now (``None``: no such row); one that does not parse is :class:`CorruptFile`, so it is
        never overwritten."""
        row = self.conn.execute(f"SELECT CAST(data AS BLOB) FROM {TABLE} WHERE session_id = ?",
                                (ref.session_id,)).fetchone()
        return None if row is None else self.store.parse(ref, row[0] or b"")

    def write(self, ref: Row, doc: dict[str, Any]) -> None:
        """``data`` exactly as the library serialises it, then the columns; a new row when there is none. No
        plaintext goes into an encrypted session (the gateway's store may be wrapped in EncryptedSessionStore)."""
        from praisonmem.core.sessions.crypto import unsealed

        try:
            current = self.read(ref)
        except PraisonMemError:
            current = None
        problem = unsealed(current, doc)
        if problem:
            raise Refused(f"{where(ref)}: {problem}; nothing changed")
        values = (serialise(doc), *columns_of(doc))
        cursor = self.conn.execute(f"UPDATE {TABLE} SET data = ?, agent_name = ?, gateway_session_id = ?, "
                                   "agent_id = ?, updated_at = ? WHERE session_id = ?", (*values, ref.session_id))
        if cursor.rowcount == 0:
            beside = json_files_beside(self.store.db.parent)
            if beside and self.conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == 0:
                raise Refused(first_row(self.store.db, beside))
            try:
                self.conn.execute(f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
                                  (ref.session_id, *values))
            except sqlite3.IntegrityError as exc:
                raise TargetExists(f"{where(ref)}: already exists") from exc
        self.written += 1

    def read_bytes(self, ref: Row) -> bytes | None:
        """The row's ``data`` as stored (``None``: no such row), once :meth:`read` vouched that it parses."""
        if self.read(ref) is None:
            return None
        row = self.conn.execute(f"SELECT CAST(data AS BLOB) FROM {TABLE} WHERE session_id = ?",
                                (ref.session_id,)).fetchone()
        return row[0] or b""

    def write_raw(self, ref: Row, raw: bytes) -> None:
        """The document in ``raw``, serialised as the library serialises ``data`` (this store keeps no layout)."""
        self.write(ref, self.store.parse(ref, raw))

    def delete(self, ref: Row) -> None:
        """Remove the row; refused when it is the last one and JSON session files lie beside the database."""
        left = self.conn.execute(f"SELECT count(*) FROM {TABLE} WHERE session_id != ?", (ref.session_id,)).fetchone()[0]
        beside = json_files_beside(self.store.db.parent)
        if left == 0 and beside:
            raise Refused(emptying(self.store.db, [ref.session_id], beside))
        cursor = self.conn.execute(f"DELETE FROM {TABLE} WHERE session_id = ?", (ref.session_id,))
        if cursor.rowcount == 0:
            raise NotFound(f"{where(ref)}: no such session")
        self.deleted += 1

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Nothing: the transcript store has no spill dir."""

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: the transcript store has no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: the transcript store has no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """After committing, scrub the old text from free pages and ``-wal``, as a delete does."""
        self.scrub = True


def emptying(db: Path, last: list[str], beside: list[str]) -> str:
    what = f"'{last[0]}' is the last session" if len(last) == 1 else f"{len(last)} sessions are all the sessions"
    return (f"{db}: {what} in {db.name}: with {'it' if len(last) == 1 else 'them'} gone the gateway would import "
            f"all {plural(len(beside), 'JSON session file')} beside it again on its next start (its one-time import runs "
            "whenever the table is empty); nothing deleted")


def first_row(db: Path, beside: list[str]) -> str:
    return (f"{db} is empty and {plural(len(beside), 'JSON session file')} lie beside it: the gateway imports them on its "
            f"next start, and a row written now would stop that import for good; nothing written to {db.name}")


def where(ref: Row) -> str:
    """How messages name a row: ``<db>:<session id>``."""
    return f"{ref.db}:{ref.session_id}"


def require_table(conn: sqlite3.Connection, db: Path) -> None:
    """Refuse a database without the library's ``sessions`` table (praisonmem never creates it), and one whose
    ``sessions`` is a view or has a trigger (:func:`~praisonmem.core.io.sqlite.require_store_tables`)."""
    require_store_tables(conn, db, dict.fromkeys(TABLES))  # columns: below
    names = {r[1] for r in conn.execute(f"PRAGMA table_info({TABLE})")}
    if not names:
        raise Refused(f"{db}: no '{TABLE}' table, so not a transcript store the gateway wrote; nothing changed")
    if not set(COLUMNS) <= names:
        raise Refused(f"{db}: the '{TABLE}' table lacks the transcript store's columns "
                      f"({', '.join(sorted(set(COLUMNS) - names))}); nothing changed")


def read_rows(db: Path) -> dict[str, bytes]:
    """Every row's ``data`` as stored, by session id, from one read-only snapshot (see
    :mod:`praisonmem.core.io.sqlite`); bytes, so text that is not UTF-8 is reported per session."""
    conn = connect_ro(db)
    try:
        require_table(conn, db)
        found: dict[str, bytes] = {}
        for sid, data in conn.execute(f"SELECT CAST(session_id AS BLOB), CAST(data AS BLOB) FROM {TABLE}"):
            found[(sid or b"").decode("utf-8", "surrogateescape")] = data or b""
        return found
    except Refused as exc:
        raise CorruptFile(str(db), exc.message.split(": ", 1)[-1]) from exc
    except sqlite3.Error as exc:
        raise translate(exc, db, 5.0) from exc
    finally:
        conn.close()


@dataclass(frozen=True)
class Inspection:
    """What ``check`` reads of a ``sessions.db``: every row as stored, and SQLite's ``quick_check``."""

    rows: list[tuple[str, bytes, tuple[Any, Any, Any, Any]]]  # id, data, (agent_name, gateway id, agent_id, updated)
    quick_check: str  # "ok", or what SQLite found first


def inspect_db(db: Path) -> Inspection:
    """Read ``db`` as ``check`` needs it (read-only, like every read here); CorruptFile when it is not a
    transcript store at all."""
    conn = connect_ro(db)
    try:
        require_table(conn, db)
        verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        rows = [((sid or b"").decode("utf-8", "surrogateescape"), data or b"", tuple(rest)) for sid, data, *rest
                in conn.execute(f"SELECT CAST(session_id AS BLOB), CAST(data AS BLOB), agent_name, "
                                f"gateway_session_id, agent_id, updated_at FROM {TABLE} ORDER BY session_id")]
        return Inspection(rows, str(verdict))
    except Refused as exc:
        raise CorruptFile(str(db), exc.message.split(": ", 1)[-1]) from exc
    except sqlite3.Error as exc:
        raise translate(exc, db, 5.0) from exc
    finally:
        conn.close()


def leftover(db: Path) -> str | None:
    """:func:`~praisonmem.core.io.sqlite.residue` as a writer asks it: free pages only where the file is small enough
    to vacuum (above that, every write would say again that it cannot), and not counted to the end."""
    try:
        small = db.stat().st_size <= VACUUM_LIMIT
    except OSError:
        return None
    return residue(db, free_pages=small, count=False)


def finish_scrub(db: Path, timeout: float) -> list[str]:
    """Finish what a praisonmem write killed after its commit left of old text in ``db`` (:func:`leftover`): the
    same scrub a delete ends with; nothing when there is none. The notes of what could not be done."""
    if leftover(db) is None:
        return []
    conn = connect_existing(db, timeout)
    try:
        require_table(conn, db)
        conn.execute("PRAGMA secure_delete=ON")
        return scrub(conn, db)
    except sqlite3.Error as exc:
        raise translate(exc, db, timeout) from exc
    finally:
        conn.close()


def interrupted_scrubs(store: Any) -> list[Path]:
    """The ``sessions.db`` files of ``store`` (itself, or a home's member) a killed write left old text in."""
    members = [store] if isinstance(store, TranscriptDbStore) else [
        s for s in getattr(store, "stores", {}).values() if isinstance(s, TranscriptDbStore)]
    return [s.db for s in members if s.db.is_file() and leftover(s.db) is not None]


def finish_interrupted(store: Any, timeout: float) -> list[str]:
    """For a rerun that finds nothing left to change (the session is gone, its secrets too): finish the scrub
    of every ``sessions.db`` of ``store`` a killed write left old text in; the notes of what could not be done.
    Only a command that writes calls this (never a read or a dry run)."""
    notes: list[str] = []
    for db in interrupted_scrubs(store):
        notes += finish_scrub(db, timeout)
    return notes


def scrub(conn: sqlite3.Connection, db: Path) -> list[str]:
    """After a committed delete: rewrite free pages and empty ``-wal``; what could not be done, as notes."""
    notes = []
    size = db.stat().st_size
    if size <= VACUUM_LIMIT:
        conn.execute("PRAGMA temp_store=MEMORY")  # VACUUM's copy stays in memory, not in a temp file
        conn.execute("VACUUM")
    else:
        notes.append(f"{db.name} is {size // (1024 * 1024)} MiB, too large to vacuum while an agent may be "
                     "waiting for it: free pages may still hold text the library wrote without secure delete")
    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy or frames != copied:
        notes.append(f"another process was reading {db.name}, so {db.name} and its -wal keep older copies of the "
                     "session's text until the next checkpoint (the library checkpoints as it writes and when it "
                     "exits)")
    return notes
