"""``sessions_index.db``: the search index ``SqliteSessionStore`` keeps beside a JSON directory (spec-11 §3).

The index is not a store of its own: the transcripts stay in the JSON files, and the
database holds a copy of each session's message text (``session_fts``, FTS5, or a plain
table where SQLite lacks FTS5), its ``updated_at`` (``session_meta``), its gateway route
(``session_route``) and bookkeeping keys (``session_index_meta``). Every directory the
library built a store on has its own (``sessions/`` and each ``sessions/projects/<id>/``).

Writing (:class:`IndexWriter`): the JSON store's transaction opens one when the index
exists (never creating it) and takes SQLite's write lock (``BEGIN IMMEDIATE``, the
library's 5 s busy timeout) *before* the first file changes, so a locked or unusable
index refuses the change while nothing is touched yet; the lock order (the session's
flock, then the database) is the library's. The rows follow the file in the same step:
removed on delete, re-keyed on rename, refreshed as the library's ``_index_session``
would on a write. Deleted text must be gone from disk (spec-11 §3.4): ``secure_delete``
zeroes freed pages, ``optimize`` rewrites the FTS5 segments (they keep the lower-cased
terms of deleted rows until merged), ``wal_checkpoint(TRUNCATE)`` drops the old page
versions from ``-wal``, and free pages some other writer left unzeroed are removed by
``VACUUM``. An FTS5 index is never written by an SQLite without FTS5 (that would mean
editing its shadow tables): refused.

Reading (:func:`read_rows`, for ``check``): through :func:`reading`, which opens the file
without creating or changing anything beside it (the recipe of spec-11 §2.8). It stands
in for the shared read helper of ``core/io/sqlite.py`` and has the same contract (a
context manager yielding a read-only connection), so the two can be swapped.
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

from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound, Refused
from praisonmem.core.io.sqlite import require_store_tables
from praisonmem.core.sessions.stores.locate import INDEX_NAME

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
    return directory / INDEX_NAME


def flatten(doc: dict[str, Any]) -> str:
    """``session_fts.content`` as ``SqliteSessionStore._flatten`` makes it: every message's content, archived
    first, joined by newlines (non-string contents as Python's ``str`` shows them; empty ones left out)."""
    parts = []
    for key in ("archived_messages", "messages"):
        messages = doc.get(key)
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                content = message.get("content", "")
                if content:
                    parts.append(str(content))
    return "\n".join(parts)


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

    @property
    def ids(self) -> set[str]:
        return set(self.updated) | self.content_ids | self.routed


def read_rows(path: Path) -> IndexRows:
    """The ids an index holds (read-only; creates nothing). The FTS5 content is read from its
    ``session_fts_content`` shadow table, so an SQLite without FTS5 can read it too."""
    try:
        with reading(path) as conn:
            kind = kind_of(conn, path)
            rows = IndexRows(path, kind)
            if kind is None:
                return rows
            content = "session_fts_content" if kind == "fts5" else "session_fts"
            column = "c0" if kind == "fts5" else "session_id"
            rows.content_ids = {r[0] for r in conn.execute(f"SELECT {column} FROM {content}")}
            rows.updated = dict(conn.execute("SELECT session_id, updated_at FROM session_meta"))
            if _has_table(conn, "session_route"):
                rows.routed = {r[0] for r in conn.execute("SELECT session_id FROM session_route")}
            return rows
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
    leaves no file beside ``db`` (spec-11 §2.8):

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
        raise IOFailure(f"{db}: cannot read: {exc.strerror or exc}") from exc
    try:
        yield conn
    finally:
        conn.close()
        if copy_dir is not None:
            shutil.rmtree(copy_dir, ignore_errors=True)


# ---------------------------------------------------------------- writing


class IndexWriter:
    """One write transaction on a directory's index, spanning one store transaction.

    :meth:`begin` before the first file changes; :meth:`forget`, :meth:`put` and
    :meth:`move` as the files change; :meth:`commit` after the last (or :meth:`rollback`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None
        self.kind: Kind | None = None
        self.notes: list[str] = []
        self.begun = False
        self.users = 0
        self._removed: list[str] = []  # texts whose rows were removed in this transaction
        self._kept: set[str] = set()  # texts rows hold after it (a rename moves a text, it does not remove it)

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
            conn.execute("BEGIN IMMEDIATE")
            if kind_of(conn, self.path) != self.kind:  # another writer rebuilt it in between
                raise Refused(f"{self.path}: the session index changed while praisonmem opened it; nothing changed")
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
        if "locked" in text or "busy" in text:
            return LockTimeout(f"{self.path}: the session index is locked by another writer (waited "
                               f"{BUSY_TIMEOUT_MS / 1000:g}s); nothing changed")
        if "not a database" in text or "malformed" in text:
            return CorruptFile(str(self.path), f"the session index is damaged ({text}), so the session's rows "
                                               "cannot be kept in step with it; nothing changed (move it aside: "
                                               "PraisonAI rebuilds it on its next search)")
        return IOFailure(f"{self.path}: {text}")

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        assert self.conn is not None
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _contents(self, session_id: str) -> list[str]:
        return [r[0] for r in self._run("SELECT content FROM session_fts WHERE session_id = ?", (session_id,))]

    def forget(self, session_id: str) -> None:
        """Remove every row of ``session_id`` (the library's ``_deindex_session`` and the pending key it leaves)."""
        if self.conn is None:
            return
        self._removed += self._contents(session_id)
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
            self._removed += old
            self._run("DELETE FROM session_fts WHERE session_id = ?", (session_id,))
            self._run("INSERT INTO session_fts (session_id, content) VALUES (?, ?)", (session_id, content))
        self._kept.add(content)
        self._run("INSERT OR REPLACE INTO session_meta (session_id, updated_at) VALUES (?, ?)",
                  (session_id, doc.get("updated_at")))
        route = route_of(doc)
        if route is None:
            self._run("DELETE FROM session_route WHERE session_id = ?", (session_id,))
        else:
            self._run("INSERT OR REPLACE INTO session_route (session_id, gateway_session_id, agent_id) "
                      "VALUES (?, ?, ?)", (session_id, *route))
        self._run("DELETE FROM session_index_meta WHERE key = ?", (PENDING + session_id,))

    def commit(self) -> list[str]:
        """Purge what was removed, commit, and clear the old page versions out of ``-wal`` and the free pages;
        what could not be cleared is said in the notes returned."""
        if not self._release() or self.conn is None:
            return self.notes
        conn, self.conn = self.conn, None
        try:
            if self.kind == "fts5" and any(text not in self._kept for text in self._removed):
                # FTS5 keeps a deleted row's terms in its segments until they are merged
                conn.execute("INSERT INTO session_fts(session_fts) VALUES('optimize')")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            conn.close()
            raise self._error(exc) from exc
        try:
            if self._removed and self._checkpoint(conn) and not _residue_free(self.path):
                conn.execute("VACUUM")  # pages an earlier writer freed without zeroing them
                self._checkpoint(conn)
        except sqlite3.Error as exc:
            self.notes.append(f"{self.path.name}: rows updated, but clearing old page versions failed ({exc})")
        finally:
            conn.close()
        return self.notes

    def _checkpoint(self, conn: sqlite3.Connection) -> bool:
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy or (log not in (-1, done)):
            self.notes.append(f"{self.path.name}: a reader kept old page versions in its -wal file "
                              f"({done} of {log} frames checkpointed); SQLite removes them at its next checkpoint")
            return False
        return True

    def rollback(self) -> None:
        if self._release() and self.conn is not None:
            conn, self.conn = self.conn, None
            _rollback(conn)
            conn.close()


_OPEN: dict[Path, IndexWriter] = {}


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


@lru_cache(maxsize=1)
def zeroes_freed_space() -> bool:
    """This SQLite zeroes what it frees unless told otherwise (built with ``SQLITE_SECURE_DELETE``, as
    Debian's is). The library's writers on this machine most likely use the same SQLite; where they
    do not zero freed cells, old text may sit in the free space of live pages, which only ``VACUUM``
    removes."""
    with _closing(sqlite3.connect(":memory:")) as conn:
        return ("SECURE_DELETE",) in conn.execute("PRAGMA compile_options").fetchall()


def _residue_free(db: Path) -> bool:
    """No page or cell freed by another writer can still hold old text (otherwise: ``VACUUM``)."""
    return zeroes_freed_space() and _free_pages_zeroed(db)


def _free_pages_zeroed(db: Path) -> bool:
    """Every page on the database's freelist is zero beyond its list structure (``secure_delete`` was on when
    it was freed), read from the file after a complete checkpoint. ``False`` when unsure."""
    try:
        with open(db, "rb") as handle:
            header = handle.read(100)
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            trunk, count = int.from_bytes(header[32:36], "big"), int.from_bytes(header[36:40], "big")
            zero = bytes(page_size)
            seen = 0
            while trunk and seen <= count:
                handle.seek((trunk - 1) * page_size)
                page = handle.read(page_size)
                seen += 1
                leaves = int.from_bytes(page[4:8], "big")
                end = 8 + 4 * leaves
                if end > page_size or page[end:] != zero[end:]:
                    return False
                for i in range(leaves):
                    leaf = int.from_bytes(page[8 + 4 * i: 12 + 4 * i], "big")
                    handle.seek((leaf - 1) * page_size)
                    if handle.read(page_size) not in (zero, b""):
                        return False
                    seen += 1
                trunk = int.from_bytes(page[0:4], "big")
    except OSError:
        return False
    return True


@contextmanager
def _closing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    try:
        yield conn
    finally:
        conn.close()
