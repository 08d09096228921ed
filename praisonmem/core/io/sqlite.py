"""Opening SQLite files safely: read-only for readers, a bounded busy timeout for writers.

A read-only open is not free of side effects (measured on SQLite 3.40): on a WAL
database that no connection has open, ``mode=ro`` makes the reader the first connection, so it
rebuilds the wal-index: it creates ``-wal`` and ``-shm`` (and leaves them), or rewrites a ``-shm``
a killed writer left. ``immutable=1`` changes nothing but reads only the main file, so it misses
committed frames still in ``-wal``. :func:`connect_ro` therefore looks first:

* whether a connection is open: every open WAL connection holds a POSIX read lock on byte 128
  of ``-shm`` (SQLite's DMS lock), which ``F_GETLK`` reports without taking anything;
* whether ``-wal`` holds frames (anything beyond its 32-byte header).

Then: no connection and no frames → ``immutable=1``; no connection but frames (a writer that
died) → a private copy of the database and its ``-wal`` in a 0700 temp dir, read there and
removed on close; a live connection → ``mode=ro``, which creates nothing and only updates the
read marks inside ``-shm`` (unavoidable while another process has it open; should that process
close in the microseconds between the look and the open, this reader rebuilds ``-shm`` as the
library's own readers would). A rollback-journal database is opened ``mode=ro``. Nothing here ever runs a checkpoint, recovery, a schema change
or ``PRAGMA journal_mode``.

A database is a file anyone can hand over (a cloned repository, an archive), and SQLite runs what its
schema says: a view by a store table's name answers every read with its own query (a recursive one never
ends), a trigger on a store table runs its own SQL inside praisonmem's writes (copying a deleted row
elsewhere, say). :func:`require_store_tables` refuses both, from ``sqlite_master`` alone (nothing is
queried), wherever a store recognises its tables.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import struct
import sys
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal

from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound, Refused, UsageError
from praisonmem.core.io.safetext import plural

WalState = Literal["rollback", "idle", "idle-frames", "live"]
WAL_HEADER_SIZE = 32
DMS_BYTE = 128  # UNIX_SHM_DMS: the byte every open WAL connection read-locks in -shm


def _is_wal_file(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return len(header) == 20 and header.startswith(b"SQLite format 3\x00") and header[18] == 2 and header[19] == 2


def _dms_query(byte: int = DMS_BYTE) -> tuple[bytes, str, int]:
    """A ``struct flock`` asking for a write lock on one byte (the DMS byte), its layout, and where ``l_type`` is."""
    import fcntl

    if sys.platform.startswith("linux"):  # l_type, l_whence, l_start, l_len, l_pid (native alignment pads)
        return struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, byte, 1, 0), "hhqqi", 0
    if sys.platform == "darwin" or "bsd" in sys.platform:  # l_start, l_len, l_pid, l_type, l_whence
        return struct.pack("qqihh", byte, 1, 0, fcntl.F_WRLCK, os.SEEK_SET), "qqihh", 3
    raise OSError("no known struct flock layout on this platform")


RESERVED_BYTE = 0x40000001  # PENDING_BYTE + 1: a writer holds it from its first change to its commit


def hot_journal(path: Path) -> bool:
    """Whether ``path`` has a hot rollback journal: a writer was killed mid-transaction, and its
    ``-journal`` still holds the pages to put back. SQLite's rule (``hasHotJournal``): the journal exists,
    is not empty and its header is not zeroed, the database is not empty, and no live writer holds the
    database's RESERVED lock. Looking takes no lock and changes nothing."""
    import fcntl

    journal = Path(f"{path}-journal")
    try:
        with open(journal, "rb") as handle:
            first = handle.read(1)
        if not first or first == b"\0" or os.stat(path).st_size == 0:
            return False
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        query, layout, type_at = _dms_query(RESERVED_BYTE)
        return struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, query))[type_at] == fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def hot_journal_error(path: Path) -> Refused:
    """What a reader says about a hot journal: reads change nothing, and putting the pages back is a write."""
    return Refused(f"{path}: a writer was killed mid-write and left a hot journal ({path.name}-journal); "
                   "praisonmem's reads never change a file: the library's next open, or a praisonmem write command "
                   "on it, lets SQLite roll the unfinished write back; nothing read")


def roll_back_journal(path: Path, timeout: float) -> bool:
    """For a writer: let SQLite put back a hot journal's pages (its own recovery, on a read-write
    connection's first read), then check the database; whether there was one. A database that then fails
    ``quick_check`` is reported (:class:`CorruptFile`) and not written."""
    if not hot_journal(path):
        return False
    try:
        conn = sqlite3.connect(path.absolute().as_uri() + "?mode=rw", uri=True, timeout=timeout)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            result = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise translate(exc, path, timeout) from exc
    if result != [("ok",)]:
        raise CorruptFile(str(path), f"fails SQLite's quick_check after rolling back an unfinished write "
                                     f"({result[0][0]}); not written")
    return True


def shm_in_use(path: Path) -> bool:
    """Whether some process has the WAL database ``path`` open (its DMS lock on ``-shm`` is held).

    Opening ``-shm`` read-only and asking ``F_GETLK`` changes nothing. Where the lock cannot be
    asked about, an existing ``-shm`` is taken to be in use (``mode=ro`` is then the safe read).
    """
    import fcntl

    try:
        fd = os.open(f"{path}-shm", os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        query, layout, type_at = _dms_query()
        return struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, query))[type_at] != fcntl.F_UNLCK
    except OSError:
        return True
    finally:
        os.close(fd)


def _wal_has_frames(path: Path) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size > WAL_HEADER_SIZE
    except FileNotFoundError:
        return False


def wal_state(path: Path) -> WalState:
    """What a reader of ``path`` meets (see the module docstring)."""
    if not _is_wal_file(path):
        return "rollback"
    if shm_in_use(path):
        return "live"
    return "idle-frames" if _wal_has_frames(path) else "idle"


class _PrivateCopy(sqlite3.Connection):
    """A connection to a private copy of a database; closing it removes the copy."""

    scratch: str | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)
                self.scratch = None

    def __del__(self) -> None:
        self.close()


def _copy_privately(path: Path, timeout: float, sidecar: str = "-wal") -> sqlite3.Connection | None:
    """The database and its ``-wal`` (or hot ``-journal``) copied into a 0700 temp dir and opened there (the
    copy's own recovery replays the frames, or rolls the journal back); ``None`` when a writer appeared or the
    files changed meanwhile."""
    scratch = tempfile.mkdtemp(prefix="praisonmem-sqlite-")
    try:
        target = Path(scratch) / path.name
        states = []
        for suffix in ("", sidecar):
            states.append(_stamp(Path(f"{path}{suffix}")))
            with open(f"{path}{suffix}", "rb") as src:
                fd = os.open(f"{target}{suffix}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        moved = states != [_stamp(path), _stamp(Path(f"{path}{sidecar}"))]
        if moved or (shm_in_use(path) if sidecar == "-wal" else not hot_journal(path)):
            shutil.rmtree(scratch, ignore_errors=True)
            return None
        conn = sqlite3.connect(str(target), timeout=timeout, factory=_PrivateCopy)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    conn.scratch = scratch
    return conn


def connect_committed(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """:func:`connect_ro`, except that a hot journal (a writer killed mid-write) is not refused: a private copy of
    the database and its journal is rolled back by SQLite and read, which is what the next writer will find
    there. For a reader that must plan a write (``migrate``'s finders); nothing beside ``path`` changes."""
    if path.is_file() and hot_journal(path):
        try:
            copy = _copy_privately(path, timeout, "-journal")
        except FileNotFoundError:  # the journal went away: a writer rolled it back meanwhile
            copy = None
        except (OSError, sqlite3.Error) as exc:
            raise IOFailure(f"{path}: cannot open: {exc}") from exc
        if copy is not None:
            return copy
    return connect_ro(path, timeout)


def _stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def connect_ro(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A read-only connection that changes nothing on disk (see the module docstring): never creates
    the file, a sidecar, a table, or a journal-mode change, and never checkpoints."""
    if not path.is_file():
        if path.exists():
            raise UsageError(f"{path}: not a database file (a directory or device)")
        raise NotFound(f"{path}: no such database")
    if hot_journal(path):
        raise hot_journal_error(path)
    try:
        state = wal_state(path)
        if state == "idle-frames":
            try:
                copy = _copy_privately(path, timeout)
            except FileNotFoundError:  # -wal went away: a writer came and closed it cleanly meanwhile
                copy = None
            if copy is not None:
                return copy
            state = wal_state(path)
            if state == "idle-frames":
                state = "live"  # still changing under us: mode=ro sees a consistent snapshot
        mode = "?mode=ro&immutable=1" if state == "idle" else "?mode=ro"
        return sqlite3.connect(path.absolute().as_uri() + mode, uri=True, timeout=timeout)
    except (OSError, sqlite3.Error) as exc:
        raise IOFailure(f"{path}: cannot open: {exc}") from exc


def connect_rw(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A writer's connection; a database it creates is 0600 from the start, and SQLite gives its
    -journal, -wal and -shm files the database's own mode."""
    from praisonmem.core.io import jsonfile

    jsonfile.makedirs(path.parent)
    try:
        _create_private(path)
        return sqlite3.connect(str(path), timeout=timeout)
    except (OSError, sqlite3.Error) as exc:
        raise IOFailure(f"{path}: cannot open: {exc}") from exc


def connect_existing(path: Path, timeout: float) -> sqlite3.Connection:
    """A writer's connection to a database that must already exist (``mode=rw``: never creates it), in
    autocommit mode with ``busy_timeout`` set, so the caller's ``BEGIN IMMEDIATE`` waits like the library's."""
    if not path.is_file():
        raise NotFound(f"{path}: no such database")
    try:
        conn = sqlite3.connect(path.absolute().as_uri() + "?mode=rw", uri=True, timeout=timeout,
                               isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        return conn
    except sqlite3.Error as exc:
        raise translate(exc, path, timeout) from exc


def _create_private(path: Path) -> None:
    """An empty file is an empty SQLite database; one that exists keeps its mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    os.close(fd)


@functools.lru_cache(maxsize=1)
def zeroes_freed_space() -> bool:
    """This SQLite zeroes what it frees unless told otherwise (built with ``SQLITE_SECURE_DELETE``, as
    Debian's is). The libraries' writers on this machine most likely use the same SQLite; where they
    do not zero freed cells, old text may sit in the free space of live pages, which only ``VACUUM``
    removes."""
    conn = sqlite3.connect(":memory:")
    try:
        return ("SECURE_DELETE",) in conn.execute("PRAGMA compile_options").fetchall()
    finally:
        conn.close()


def dirty_free_pages(db: Path, *, first: bool = False) -> int | None:
    """How many pages on the database's freelist hold bytes beyond their list structure: what a writer freed
    without zeroing it (``secure_delete`` off), deleted rows' text among it. Read from the main file, so it
    is exact only when ``-wal`` holds no frames (after a complete checkpoint); ``None`` when the file cannot
    be read or its freelist does not make sense. A database never shrunk has no freelist: 0. With ``first``, the
    count stops at the first such page (whether there is one, without reading a long freelist to its end)."""
    try:
        with open(db, "rb") as handle:
            header = handle.read(100)
            if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
                return None if header else 0
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            trunk, count = int.from_bytes(header[32:36], "big"), int.from_bytes(header[36:40], "big")
            zero = bytes(page_size)
            seen = dirty = 0
            while trunk and seen <= count:
                handle.seek((trunk - 1) * page_size)
                page = handle.read(page_size)
                seen += 1
                leaves = int.from_bytes(page[4:8], "big")
                end = 8 + 4 * leaves
                if end > page_size:
                    return None
                dirty += page[end:] != zero[end:]
                for i in range(leaves):
                    if first and dirty:
                        return dirty
                    leaf = int.from_bytes(page[8 + 4 * i: 12 + 4 * i], "big")
                    handle.seek((leaf - 1) * page_size)
                    dirty += handle.read(page_size) not in (zero, b"")
                    seen += 1
                trunk = int.from_bytes(page[0:4], "big")
    except OSError:
        return None
    return dirty


def wal_frames(path: Path) -> int:
    """How many frames ``-wal`` has room for beyond its header (0: none, or no ``-wal``)."""
    try:
        size = os.stat(f"{path}-wal").st_size
    except OSError:
        return 0
    if size <= WAL_HEADER_SIZE:
        return 0
    try:
        with open(path, "rb") as handle:
            header = handle.read(18)
        page_size = int.from_bytes(header[16:18], "big") if len(header) == 18 else 4096
    except OSError:
        page_size = 4096
    page_size = 65536 if page_size == 1 else (page_size or 4096)
    return max(1, (size - WAL_HEADER_SIZE) // (page_size + 24))


def residue(path: Path, *, free_pages: bool = True, count: bool = True) -> str | None:
    """What of old text the files of ``path`` may still hold after an interrupted write, in words, or ``None``:

    * ``-wal`` holds frames and no process has the database open: the writer did not reach its checkpoint (a
      kill), so page versions from before its last changes (deleted rows' text among them) sit in the main file
      and in ``-wal``;
    * free pages hold bytes (:func:`dirty_free_pages`, read when ``-wal`` is empty): pages a writer freed
      without zeroing them.

    While a process has it open, its ``-wal`` is in use and tells nothing: ``None``. A fresh or cleanly closed
    database has neither. Without ``free_pages`` only the first is looked for; without ``count``, the free pages
    are not counted to the end. Looking takes no lock and changes nothing."""
    state = wal_state(path)
    if state == "live":
        return None
    if state == "idle-frames":
        frames = wal_frames(path)
        return (f"{path.name}-wal holds {plural(frames, 'frame')} a writer left without checkpointing them (it was killed): "
                "the older page versions there and in the main file may keep text deleted since")
    dirty = dirty_free_pages(path, first=not count) if free_pages else 0
    if dirty:
        return (f"{plural(dirty, 'free page') if count else 'some free pages'} of {path.name} still hold bytes a writer freed without "
                "zeroing them, deleted rows' text among them")
    return None


def translate(exc: sqlite3.Error, path: Path, timeout: float) -> Exception:
    """A one-line praisonmem error for an SQLite failure."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return LockTimeout(f"{path}: database is locked by another writer (waited {timeout:g}s); nothing changed")
    if "file is not a database" in text or "malformed" in text:
        return CorruptFile(str(path), text)
    return IOFailure(f"{path}: {text}")


def store_tables_problem(conn: sqlite3.Connection, tables: Mapping[str, Collection[str] | None],
                         required: Collection[str] = ()) -> str | None:
    """What makes ``conn``'s database other than plain tables of a store (``None``: nothing): a view, index or
    virtual table (other than FTS5) by one of the ``tables``' names, a trigger on one of them, a ``required``
    table missing, or a table without the columns given for it (``None``: any columns). Reads ``sqlite_master``
    and ``PRAGMA table_info`` of real tables only, so no view is ever run."""
    wanted = {name.lower(): name for name in tables}  # SQLite's names are case-insensitive
    marks = ", ".join("?" * len(wanted))
    rows = conn.execute(f"SELECT type, name, tbl_name, sql FROM sqlite_master WHERE lower(name) IN ({marks}) "
                        f"OR (type = 'trigger' AND lower(tbl_name) IN ({marks})) ORDER BY type, name",
                        [*wanted, *wanted]).fetchall()
    found: set[str] = set()
    for kind, name, table, sql in rows:
        if kind == "trigger":
            return f"a trigger ('{name}') on the table '{table}', which would run its own SQL inside every change"
        if kind == "view":
            return f"'{name}' is a view, not a table: it would answer every read with its own query"
        if kind != "table":
            return f"'{name}' is an {kind}, not a table"
        text = " ".join(str(sql or "").upper().split())
        if text.startswith("CREATE VIRTUAL TABLE") and "USING FTS5" not in text:
            return f"'{name}' is a virtual table of a module no store uses"
        found.add(name.lower())
    for name in required:
        if name.lower() not in found:
            return f"no '{name}' table"
    for name, columns in tables.items():
        if columns and name.lower() in found:
            have = {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')}
            lacking = [c for c in columns if c not in have]
            if lacking:
                return f"the '{name}' table lacks the store's columns ({', '.join(lacking)})"
    return None


def require_store_tables(conn: sqlite3.Connection, path: Path, tables: Mapping[str, Collection[str] | None],
                         required: Collection[str] = (), *, then: str = "nothing read or written") -> None:
    """:func:`store_tables_problem` as a one-line :class:`Refused` naming ``path`` (exit 4); an SQLite error
    (a file that is not a database) is the caller's to word, as for any other read."""
    problem = store_tables_problem(conn, tables, required)
    if problem is not None:
        raise Refused(f"{path}: {problem}; not a store as its library writes it, {then}")


DELETE_BATCH = 500  # ids bound per statement: under SQLite's oldest limit of 999 host parameters


def delete_in(conn: sqlite3.Connection, table: str, column: str, ids: Sequence[object]) -> int:
    """Delete the rows of ``table`` (an SQL name, quoted by the caller when it needs quoting) whose ``column`` is
    one of ``ids``, :data:`DELETE_BATCH` ids a statement, inside the caller's transaction; the rows removed."""
    removed = 0
    for start in range(0, len(ids), DELETE_BATCH):
        part = list(ids[start:start + DELETE_BATCH])
        removed += conn.execute(f"DELETE FROM {table} WHERE {column} IN ({', '.join('?' * len(part))})",
                                part).rowcount
    return removed


def vacuum_clean(conn: sqlite3.Connection, db: Path, *, always: bool = True) -> list[str]:
    """After a committed delete that must leave no text behind (``forget``): copy a WAL back and empty it, then
    ``VACUUM`` whatever the free pages look like, since text an earlier writer deleted without ``secure_delete``
    may sit in the free space *inside* live pages, which no freelist count sees and only a rebuild of every page
    removes; then empty the WAL again. What could not be done (a reader holding an old snapshot keeps ``-wal``),
    as notes. ``conn`` is in autocommit mode and holds no transaction. ``always=False``: ``VACUUM`` only when
    free pages hold bytes a writer freed without zeroing them (a delete that need not reach text inside live pages).
    """
    wal = conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # a query: the mode is not changed
    if wal:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # first: the free-page count reads the main file
    if always or dirty_free_pages(db):
        conn.execute("PRAGMA temp_store=MEMORY")  # VACUUM's copy stays in memory, not in a temp file
        conn.execute("VACUUM")
    if wal:
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy or frames != copied:
            return [f"another process was reading {db.name}, so its -wal keeps the deleted text until the next "
                    "checkpoint"]
    left = residue(db)
    return [left] if left else []
