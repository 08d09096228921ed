"""``sessions_index.db``: the search index ``SqliteSessionStore`` keeps beside a JSON directory.

The index is not a store of its own: the transcripts stay in the JSON files, and the
database holds a copy of each session's message text (``session_fts``, FTS5, or a plain
table where SQLite lacks FTS5), its ``updated_at`` (``session_meta``), its gateway route
(``session_route``) and bookkeeping keys (``session_index_meta``). Every directory the
library built a store on has its own (``sessions/`` and each ``sessions/projects/<id>/``).

Writing (:class:`IndexWriter`): the JSON store's transaction opens one when the index
exists (never creating it) and takes SQLite's write lock (``BEGIN IMMEDIATE``, the
library's 5 s busy timeout) *before* the first file changes, so a locked or unusable
index refuses the change while nothing is touched yet; the lock order (the session's
flock, then the database) is the library's. The index changes *ahead of* each file: the
rows the file will have (removed on delete, re-keyed on rename, refreshed as the
library's ``_index_session`` would on a write) are committed, and the text no row holds
any more is cleared from the database's files, before the file changes (:meth:`IndexWriter.settle`).
So a kill at any point leaves no text in the index that its session no longer has; the
rerun makes the file change. Removed text must be gone from disk: ``secure_delete``
zeroes freed pages, ``optimize`` (in the same commit) rewrites the FTS5 segments, which
keep the lower-cased terms of deleted rows until merged, ``wal_checkpoint(TRUNCATE)``
drops the old page versions from the main file and ``-wal``, and free pages some other
writer left unzeroed are removed by ``VACUUM``. A kill between the commit and the end of
that scrub leaves :data:`SCRUB_KEY`, and the next write finishes the scrub first. An FTS5
index is never written by an SQLite without FTS5 (that would mean editing its shadow
tables): refused.

Reading (:func:`read_rows`, for ``check`` and ``migrate``): through :func:`reading`, which
opens the file without creating or changing anything beside it. It stands in for the
shared read helper of ``core/io/sqlite.py`` and has the same contract (a context manager
yielding a read-only connection), so the two can be swapped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound, Refused, os_reason
from praisonmem.core.io.sqlite import dirty_free_pages, require_store_tables, zeroes_freed_space
from praisonmem.core.sessions.stores.indextext import flatten, text_digest
from praisonmem.core.layout import INDEX_DB

BUSY_TIMEOUT_MS = 5000  # SqliteSessionStore's busy timeout
PENDING = "import_pending:"
Kind = Literal["fts5", "plain"]
# The index's tables as SqliteSessionStore creates them (session_fts: FTS5, or a plain table without it), and the
# shadow tables FTS5 keeps for session_fts.
TABLES: dict[str, tuple[str, ...] | None] = {
    "session_fts": ("session_id", "content"), "session_meta": ("session_id", "updated_at"),
    "session_route": ("session_id", "gateway_session_id", "agent_id"), "session_index_meta": ("key", "value"),
    **dict.fromkeys(f"session_fts_{shadow}" for shadow in ("data", "idx", "content", "docsize", "config")),
}


def index_path(directory: Path) -> Path:
    return directory / INDEX_DB


def route_of(doc: dict[str, Any]) -> tuple[Any, Any] | None:
    """The ``session_route`` row the library writes for ``doc`` (``None``: it deletes the row)."""
    gateway, agent = doc.get("gateway_session_id"), doc.get("agent_id")
    return (gateway, agent) if gateway or agent else None


@lru_cache(maxsize=1)
def fts5_available() -> bool:
    """Whether this Python's SQLite has the FTS5 module."""
    try:
        with _closing(sqlite3.connect(":memory:")) as conn:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.Error:
        return False
    return True


def kind_of(conn: sqlite3.Connection, path: Path) -> Kind | None:
    """``fts5``, ``plain`` (the library's fallback without FTS5), or ``None``: not an index (nothing to keep).
    An index whose tables are views or carry triggers is refused before anything reads them."""
    require_store_tables(conn, path, TABLES)
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'session_fts'").fetchone()
    if row is None:
        return None
    sql = str(row[0] or "").lstrip().upper()
    if sql.startswith("CREATE VIRTUAL TABLE"):
        if "FTS5" not in sql:
            raise Refused(f"{path}: session_fts is a virtual table praisonmem does not know ({row[0]}); "
                          "nothing changed")
        return "fts5"
    return "plain"


# ---------------------------------------------------------------- reading


@dataclass
class IndexRows:
    """What an index holds, per raw session id."""

    path: Path
    kind: Kind | None
    updated: dict[str, Any] = field(default_factory=dict)  # session_meta: id -> updated_at
    content_ids: set[str] = field(default_factory=set)  # ids with a session_fts row
    routed: set[str] = field(default_factory=set)  # ids with a session_route row
    digests: dict[str, list[str]] = field(default_factory=dict)  # id -> text_digest of each of its text rows
    scrub_pending: bool = False  # a praisonmem write was killed before it cleared removed text (SCRUB_KEY)

    @property
    def ids(self) -> set[str]:
        return set(self.updated) | self.content_ids | self.routed


def read_rows(path: Path) -> IndexRows:
    """The ids an index holds and a digest of each text row (read-only; creates nothing). The FTS5 content is
    read from its ``session_fts_content`` shadow table, so an SQLite without FTS5 can read it too."""
    try:
        with reading(path) as conn:
            kind = kind_of(conn, path)
            rows = IndexRows(path, kind)
            if kind is None:
                return rows
            content = "session_fts_content" if kind == "fts5" else "session_fts"
            columns = "c0, c1" if kind == "fts5" else "session_id, content"
            for sid, text in conn.execute(f"SELECT {columns} FROM {content}"):
                rows.content_ids.add(sid)
                rows.digests.setdefault(sid, []).append(text_digest(str(text or "")))
            rows.updated = dict(conn.execute("SELECT session_id, updated_at FROM session_meta"))
            if _has_table(conn, "session_route"):
                rows.routed = {r[0] for r in conn.execute("SELECT session_id FROM session_route")}
            if _has_table(conn, "session_index_meta"):
                rows.scrub_pending = conn.execute("SELECT 1 FROM session_index_meta WHERE key = ?",
                                                  (SCRUB_KEY,)).fetchone() is not None
            return rows
    except sqlite3.Error as exc:
        raise CorruptFile(str(path), f"cannot read the session index: {exc}") from exc


def read_texts(path: Path, ids: set[str]) -> dict[str, list[str]]:
    """The text rows of ``ids`` (read-only, as :func:`read_rows`)."""
    try:
        with reading(path) as conn:
            kind = kind_of(conn, path)
            if kind is None or not ids:
                return {}
            content = "session_fts_content" if kind == "fts5" else "session_fts"
            columns = "c0, c1" if kind == "fts5" else "session_id, content"
            found: dict[str, list[str]] = {}
            for sid, text in conn.execute(f"SELECT {columns} FROM {content}"):
                if sid in ids:
                    found.setdefault(sid, []).append(str(text or ""))
            return found
    except sqlite3.Error as exc:
        raise CorruptFile(str(path), f"cannot read the session index: {exc}") from exc


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def live_writer(db: Path) -> bool:
    """A connection has the WAL database open: it holds the read lock on byte 128 of ``-shm``
    (``UNIX_SHM_DMS``). Opening ``-shm`` read-only and asking (``F_GETLK``) changes nothing."""
    try:
        fd = os.open(f"{db}-shm", os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)
        kind = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))[0]
    except OSError:
        return False
    finally:
        os.close(fd)
    return kind != fcntl.F_UNLCK


@contextmanager
def reading(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection that triggers no recovery, checkpoint or schema change and creates, changes or
    leaves no file beside ``db``:

    * a live writer (its ``-shm`` lock is held): ``mode=ro`` (only ``-shm`` read marks change, unavoidably);
    * nobody has it open and ``-wal`` holds frames (a writer died): ``db`` and ``-wal`` copied into a
      private temp dir, read there;
    * otherwise: ``mode=ro&immutable=1`` on the file itself.
    """
    if not db.is_file():
        raise NotFound(f"{db}: no such database")
    wal = Path(f"{db}-wal")
    copy_dir = None
    try:
        if live_writer(db):
            uri = db.absolute().as_uri() + "?mode=ro"
        elif wal.is_file() and wal.stat().st_size > 0:
            copy_dir = Path(tempfile.mkdtemp(prefix="praisonmem-index-"))  # 0700
            copy = copy_dir / db.name
            shutil.copyfile(db, copy)
            shutil.copyfile(wal, f"{copy}-wal")
            uri = copy.as_uri() + "?mode=ro"
        else:
            uri = db.absolute().as_uri() + "?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True)
    except OSError as exc:
        if copy_dir is not None:
            shutil.rmtree(copy_dir, ignore_errors=True)
        raise IOFailure(f"{db}: cannot read: {os_reason(exc)}") from exc
    try:
        yield conn
    finally:
        conn.close()
        if copy_dir is not None:
            shutil.rmtree(copy_dir, ignore_errors=True)


# ---------------------------------------------------------------- writing

# A session_index_meta row praisonmem keeps while text it removed may still sit in old page versions (the main
# file before a checkpoint, -wal, free pages): a write killed in between leaves it, and the next praisonmem write
# on the directory finishes the scrub before it changes anything else. The library reads only its own keys there.
SCRUB_KEY = "praisonmem:scrub_pending"


class IndexWriter:
    """One directory's index across one store transaction, each change of it made ahead of the file's.

    :meth:`begin` before the first file changes (it takes the write lock, or refuses while nothing is touched);
    then for each file change, first the rows the file will have (:meth:`forget`, :meth:`put`), then
    :meth:`settle`, which commits them and clears the text they no longer hold out of the database's files,
    and only then the file change itself. :meth:`commit` when the store transaction ends, :meth:`rollback`
    when it fails (the rows of a step whose file never changed).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None
        self.kind: Kind | None = None
        self.notes: list[str] = []
        self.begun = False
        self.users = 0
        self.steps = 0  # steps settled: after the first, a failure no longer means "nothing changed"
        self._removed: list[str] = []  # texts whose rows this step removed
        self._holders: dict[str, set[str]] = {}  # text -> ids whose rows hold it now (a rename moves a text)
        self._marks = False  # the index has session_index_meta, where SCRUB_KEY goes
        self._pending = False  # SCRUB_KEY was there: a killed write's scrub to finish

    @classmethod
    def of(cls, directory: Path) -> IndexWriter | None:
        """The directory's writer, shared by every store transaction open on it in this process (two stores
        share ``sessions/``: a second connection would wait on the first's write lock); ``None``: no index."""
        path = index_path(directory)
        if not path.is_file():
            return None
        writer = _OPEN.get(path)
        if writer is None:
            writer = _OPEN[path] = cls(path)
        writer.users += 1
        return writer

    def _release(self) -> bool:
        """One user done; whether it was the last (then the transaction ends)."""
        self.users -= 1
        if self.users > 0:
            return False
        _OPEN.pop(self.path, None)
        return True

    def begin(self) -> None:
        """Open the index and take its write lock; refuse (nothing changed yet) when that cannot be done
        safely. An index without ``session_fts`` holds no session text: it is left alone."""
        if self.begun:
            return
        self.begun = True
        self.kind = self._kind()  # read-only first: a refusal opens nothing for writing (no sidecar appears)
        if self.kind is None:
            return
        try:
            # mode=rw: never creates the file; no journal_mode pragma, no schema
            conn = sqlite3.connect(self.path.absolute().as_uri() + "?mode=rw", uri=True, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise IOFailure(f"{self.path}: cannot open the session index: {exc}; nothing changed") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA temp_store=MEMORY")  # VACUUM's copy of the rows stays in memory, not a temp file
            conn.execute("BEGIN IMMEDIATE")
            if kind_of(conn, self.path) != self.kind:  # another writer rebuilt it in between
                raise Refused(f"{self.path}: the session index changed while praisonmem opened it; nothing changed")
            self._marks = _has_table(conn, "session_index_meta")
            self._pending = self._marks and conn.execute("SELECT 1 FROM session_index_meta WHERE key = ?",
                                                         (SCRUB_KEY,)).fetchone() is not None
        except sqlite3.Error as exc:
            _rollback(conn)
            conn.close()
            raise self._error(exc) from exc
        except BaseException:
            _rollback(conn)
            conn.close()
            raise
        self.conn = conn

    def _kind(self) -> Kind | None:
        try:
            with reading(self.path) as conn:
                kind = kind_of(conn, self.path)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        if kind == "fts5" and not fts5_available():
            raise Refused(f"{self.path}: this session index uses FTS5, which this Python's SQLite "
                          f"({sqlite3.sqlite_version}) lacks, so praisonmem cannot remove or update its rows "
                          "(the session's text would stay in it); nothing changed")
        return kind

    def _error(self, exc: sqlite3.Error) -> Refused | IOFailure:
        text = str(exc)
        # after a settled step a session file has changed: the command's earlier changes stand
        outcome = "nothing changed" if not self.steps else "the changes made before it stand (run the command again)"
        if "locked" in text or "busy" in text:
            return LockTimeout(f"{self.path}: the session index is locked by another writer (waited "
                               f"{BUSY_TIMEOUT_MS / 1000:g}s); {outcome}")
        if "not a database" in text or "malformed" in text:
            return CorruptFile(str(self.path), f"the session index is damaged ({text}), so the session's rows "
                                               f"cannot be kept in step with it; {outcome} (move it aside: "
                                               "PraisonAI rebuilds it on its next search)")
        return IOFailure(f"{self.path}: {text}")

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        assert self.conn is not None
        try:
            if not self.conn.in_transaction:  # the step before this one was settled: a new write transaction
                self.conn.execute("BEGIN IMMEDIATE")
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _contents(self, session_id: str) -> list[str]:
        return [r[0] for r in self._run("SELECT content FROM session_fts WHERE session_id = ?", (session_id,))]

    def _drop(self, session_id: str, texts: list[str]) -> None:
        self._removed += texts
        for text in texts:
            self._holders.get(text, set()).discard(session_id)

    def forget(self, session_id: str) -> None:
        """Remove every row of ``session_id`` (the library's ``_deindex_session`` and the pending key it leaves)."""
        if self.conn is None:
            return
        self._drop(session_id, self._contents(session_id))
        self._run("DELETE FROM session_fts WHERE session_id = ?", (session_id,))
        self._run("DELETE FROM session_meta WHERE session_id = ?", (session_id,))
        self._run("DELETE FROM session_route WHERE session_id = ?", (session_id,))
        self._run("DELETE FROM session_index_meta WHERE key = ?", (PENDING + session_id,))

    def put(self, session_id: str, doc: dict[str, Any]) -> None:
        """The rows the library's ``_index_session`` writes for ``doc``; the text row is left as it is
        when it already holds exactly this text (a retitle changes no message)."""
        if self.conn is None:
            return
        content = flatten(doc)
        old = self._contents(session_id)
        if old != [content]:
            self._drop(session_id, old)
            self._run("DELETE FROM session_fts WHERE session_id = ?", (session_id,))
            self._run("INSERT INTO session_fts (session_id, content) VALUES (?, ?)", (session_id, content))
        self._holders.setdefault(content, set()).add(session_id)
        self._run("INSERT OR REPLACE INTO session_meta (session_id, updated_at) VALUES (?, ?)",
                  (session_id, doc.get("updated_at")))
        route = route_of(doc)
        if route is None:
            self._run("DELETE FROM session_route WHERE session_id = ?", (session_id,))
        else:
            self._run("INSERT OR REPLACE INTO session_route (session_id, gateway_session_id, agent_id) "
                      "VALUES (?, ?, ?)", (session_id, *route))
        self._run("DELETE FROM session_index_meta WHERE key = ?", (PENDING + session_id,))

    def settle(self) -> None:
        """Make this step's rows durable before its file changes: commit them (a removed text's terms purged from
        the FTS5 segments in the same commit) and clear the text no row holds any more out of the main file,
        ``-wal`` and the free pages. A kill anywhere in here leaves the file as it was, and the scrub marker
        for the next write. What could not be cleared is said in the notes."""
        if self.conn is None:
            return
        removed = any(not self._holders.get(text) for text in self._removed)
        self._removed = []
        if self.conn.in_transaction:
            try:
                if removed and self.kind == "fts5":
                    # FTS5 keeps a deleted row's terms in its segments until they are merged
                    self.conn.execute("INSERT INTO session_fts(session_fts) VALUES('optimize')")
                if removed and self._marks:
                    self.conn.execute("INSERT OR REPLACE INTO session_index_meta (key, value) VALUES (?, '1')",
                                      (SCRUB_KEY,))
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(self.conn)
                raise self._error(exc) from exc
        self.steps += 1
        if removed or self._pending:
            self._scrub(self.conn)

    def _scrub(self, conn: sqlite3.Connection) -> None:
        """Checkpoint (old page versions out of the main file, ``-wal`` emptied), VACUUM when free pages or cells
        another writer left may hold old text, then drop the scrub marker; it stays when a reader held the
        checkpoint back, so the next write tries again."""
        self._pending = False
        try:
            done = self._checkpoint(conn)
            if done and not _residue_free(self.path):
                conn.execute("VACUUM")  # pages an earlier writer freed without zeroing them
                done = self._checkpoint(conn)
            if done and self._marks:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("DELETE FROM session_index_meta WHERE key = ?", (SCRUB_KEY,))
                conn.execute("COMMIT")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the marker's own page: it holds no text
        except sqlite3.Error as exc:
            _rollback(conn)
            self.notes.append(f"{self.path.name}: rows updated, but clearing old page versions failed ({exc}); "
                              "praisonmem's next write here tries again")

    def commit(self) -> list[str]:
        """End the store transaction: settle what is left (nothing, when every file change was settled first) and
        close; the notes of what could not be cleared."""
        if not self._release() or self.conn is None:
            return self.notes
        try:
            self.settle()
        finally:
            self.conn.close()
            self.conn = None
        return self.notes

    def _checkpoint(self, conn: sqlite3.Connection) -> bool:
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy or (log not in (-1, done)):
            self.notes.append(f"{self.path.name}: a reader kept old page versions in its -wal file "
                              f"({done} of {log} frames checkpointed); SQLite removes them at its next checkpoint, "
                              "and praisonmem's next write here tries again")
            return False
        return True

    def rollback(self) -> None:
        """The store transaction failed: the rows of a step not settled are dropped (its file never changed);
        settled steps stand, as their files do."""
        if self.conn is not None:
            _rollback(self.conn)
        if self._release() and self.conn is not None:
            self.conn.close()
            self.conn = None


_OPEN: dict[Path, IndexWriter] = {}


def finish_scrub(directory: Path) -> list[str]:
    """Finish the scrub a killed praisonmem write left marked in ``directory``'s index (no file changes, so no
    session lock is needed); the notes of what could not be done."""
    writer = IndexWriter.of(directory)
    if writer is None:
        return []
    try:
        writer.begin()
        writer.settle()
    except BaseException:
        writer.rollback()
        raise
    return writer.commit()


def forget_rows(directory: Path, session_id: str) -> list[str]:
    """Remove every row of ``session_id`` from ``directory``'s index when no file of it is there any more (rows a
    library write left behind its file), with the text cleared from the database's files as a delete clears it;
    the notes of what could not be cleared."""
    writer = IndexWriter.of(directory)
    if writer is None:
        return []
    try:
        writer.begin()
        writer.forget(session_id)
        writer.settle()
    except BaseException:
        writer.rollback()
        raise
    return writer.commit()


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _residue_free(db: Path) -> bool:
    """No page or cell freed by another writer can still hold old text (otherwise: ``VACUUM``)."""
    return zeroes_freed_space() and dirty_free_pages(db) == 0


@contextmanager
def _closing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    try:
        yield conn
    finally:
        conn.close()
