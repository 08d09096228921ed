"""SQLite files in a backup (``sessions.db``, ``sessions_index.db``): taken, checked and put back safely.

* **Taken** with SQLite's online backup API, all pages in one read transaction, so the copy is consistent
  while a writer runs (the gateway's ``SqliteTranscriptStore`` commits every turn). The source is opened
  read-only in the way that changes nothing on disk: a database a process has open (its
  ``-shm`` read lock on byte 128 is held) with ``mode=ro``, which only sets read marks in that ``-shm``; an
  idle one with nothing in ``-wal``/``-journal`` with ``mode=ro&immutable=1``, which creates no ``-wal`` or
  ``-shm``; an idle one with frames in ``-wal`` or a ``-journal`` (a writer that died) from a private copy
  of it and its sidecars, so no recovery runs on the user's files. Never the library's opener, which may
  "repair" (replace or delete) a damaged file. A file SQLite cannot read is archived as it is, marked
  damaged.
* **Checked** with ``PRAGMA quick_check`` on the copy opened ``immutable`` (it has no WAL content: the
  backup API wrote every page into the file), at backup and at verify; and for being the store its name
  says, as the store itself recognises it (:func:`schema_problem`): its tables real tables with the
  library's columns, no view by their names and no trigger on them. A database that is not is refused: no
  backup is written of it, and an archive holding one is not restored.
* **Put back** only while SQLite's own locks say nobody uses it: the restore holds the write lock on the
  database's lock bytes (what a writer's EXCLUSIVE lock takes), which fails while any process holds it open
  in WAL mode (every such connection keeps a read lock there) or is inside a transaction, and refuses a
  database with committed changes still in its ``-wal`` or a ``-journal`` beside it (a writer that died: its
  frames would be replayed over the restored file). A rollback-journal database that a process holds open
  but idle shows no lock and cannot be detected: stop the agents before restoring.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sqlite3
import struct
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from praisonmem.core.errors import LockTimeout, Refused, io_failure
from praisonmem.core.layout import LEARN_DB, TRANSCRIPT_DB

HEADER = b"SQLite format 3\x00"
PENDING_BYTE = 0x40000000  # SQLite's lock bytes: PENDING, RESERVED, then the 510-byte SHARED range
LOCK_BYTES = 512
DMS_BYTE = 128  # in -shm: every connection of a WAL database holds a read lock here while it is open
POLL = 0.02
ATTEMPTS = 3  # reads of an idle database that a writer opened during the read


def _lock_holder(path: str, start: int, length: int) -> int | None:
    """The pid holding a POSIX lock on those bytes of ``path`` (any kind), or ``None``; reading changes nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, start, length, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))
    finally:
        os.close(fd)
    return None if kind == fcntl.F_UNLCK else pid


def open_by(db: Path) -> int | None:
    """The pid of a process that has the WAL database open (its ``-shm`` read lock), or ``None``."""
    return _lock_holder(f"{db}-shm", DMS_BYTE, 1)


def pending_changes(db: Path) -> str | None:
    """What beside ``db`` holds changes not yet in it: frames in ``-wal``, or a ``-journal``."""
    wal, journal = Path(f"{db}-wal"), Path(f"{db}-journal")
    if wal.is_file() and wal.stat().st_size > 0:
        return wal.name
    if journal.exists():
        return journal.name
    return None


@contextmanager
def source(db: Path, timeout: float) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``db`` that leaves every file as it is (see the module docstring)."""
    with ExitStack() as stack:
        if open_by(db) is not None:
            conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=timeout)
        elif pending_changes(db) is None:
            conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro&immutable=1", uri=True, timeout=timeout)
        else:
            copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="praisonmem-"))) / db.name
            for suffix in ("", "-wal", "-journal"):
                if os.path.exists(f"{db}{suffix}"):
                    shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
            conn = sqlite3.connect(str(copy), timeout=timeout)  # recovery runs here, on the private copy
        stack.callback(conn.close)
        yield conn


def _schema(name: str) -> tuple[dict[str, tuple[str, ...] | None], tuple[str, ...]]:
    """The tables of the store ``name`` (with their columns) and those it cannot be without."""
    from praisonmem.core import sessions

    if name == TRANSCRIPT_DB:
        return sessions.transcript_tables, tuple(sessions.transcript_tables)
    if name == LEARN_DB:
        from praisonmem.core import learn

        return learn.LEARN_TABLES, tuple(learn.LEARN_TABLES)
    return sessions.index_tables, ("session_fts", "session_meta")


def schema_problem(path: Path, name: str) -> str | None:
    """Why the database at ``path`` (opened ``immutable``) is not the store ``name`` (one of :data:`~praisonmem.core.layout.DATABASES`) as
    its library writes it, read from its schema alone (no view is run); ``None`` when it is."""
    from praisonmem.core.io.sqlite import store_tables_problem

    tables, required = _schema(name)
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            return store_tables_problem(conn, tables, required)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return f"SQLite cannot read it: {exc}"


def check_source(db: Path, timeout: float) -> None:
    """Refuse ``db`` before a backup starts writing when its schema is not its store's (:func:`schema_problem`),
    read from the file as it is (:func:`source`: nothing changes on disk); a file SQLite cannot read is left
    to :func:`snapshot`, which archives it marked damaged."""
    from praisonmem.core.io.sqlite import store_tables_problem

    tables, required = _schema(db.name)
    try:
        with source(db, timeout) as conn:
            problem = store_tables_problem(conn, tables, required)
    except sqlite3.DatabaseError:
        return
    except OSError as exc:
        raise io_failure(db, exc, then="backup not written") from exc
    if problem is not None:
        raise Refused(f"{db}: {problem}; not a store as its library writes it, backup not written")


def quick_check(path: Path) -> str | None:
    """``None`` when ``PRAGMA quick_check`` passes on ``path`` (opened ``immutable``: no sidecar, no
    recovery), else what it says."""
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return f"SQLite cannot read it: {exc}"
    return None if rows == ["ok"] else "quick_check: " + "; ".join(str(r) for r in rows[:3])


def snapshot(db: Path, timeout: float) -> tuple[bytes, str | None]:
    """A consistent copy of ``db`` and why it is damaged (``None``: quick_check passed). A database SQLite
    cannot read at all is returned as it is on disk, with the reason."""
    for _ in range(ATTEMPTS):
        with tempfile.TemporaryDirectory(prefix="praisonmem-") as private:
            copy = Path(private) / "snapshot.db"
            before = _state(db)
            try:
                with source(db, timeout) as src:
                    dst = sqlite3.connect(str(copy))
                    try:
                        src.backup(dst)
                    finally:
                        dst.close()
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise LockTimeout(f"{db}: database locked for over {timeout:g}s; backup not written") from exc
                return _as_is(db, exc)
            except sqlite3.DatabaseError as exc:
                return _as_is(db, exc)
            # Read as idle (immutable) but a writer opened it meanwhile: read again, now as a live database.
            if before[0] is not None or _state(db) == before:
                damage = quick_check(copy)
                problem = schema_problem(copy, db.name) if damage is None else None
                if problem is not None:
                    raise Refused(f"{db}: {problem}; not a store as its library writes it, backup not written")
                return copy.read_bytes(), damage
    raise LockTimeout(f"{db}: kept changing while it was read; backup not written")


def _state(db: Path) -> tuple[int | None, int, int]:
    """Whether a process has it open, and its size and mtime: what an idle read assumed stays put."""
    st = db.stat()
    return open_by(db), st.st_size, st.st_mtime_ns


def _as_is(db: Path, exc: sqlite3.Error) -> tuple[bytes, str]:
    try:
        return db.read_bytes(), f"SQLite cannot read it ({exc}); archived as it is"
    except OSError as error:
        raise io_failure(db, error, then="backup not written") from error


@contextmanager
def exclusive(db: Path, timeout: float) -> Iterator[None]:
    """Hold SQLite's write lock bytes of ``db`` (nothing to hold when it does not exist yet) and refuse when
    something beside it holds changes; what a restore needs before it renames a file over ``db``."""
    fd = None
    try:
        fd = os.open(db, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise io_failure(db, exc, "cannot lock") from exc
    try:
        if fd is not None:
            _lock_all(fd, db, timeout)
        waiting = pending_changes(db)
        if waiting is not None:
            raise Refused(f"{db}: {waiting} beside it holds changes a writer did not finish (it would be replayed "
                          "over the restored file); open the database once with its application, or move it "
                          "away, then restore; not restored")
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _lock_all(fd: int, db: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, PENDING_BYTE, LOCK_BYTES, 0)
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLK, request)
            return
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise io_failure(db, exc, "cannot lock") from exc
        if time.monotonic() >= deadline:
            holder = _lock_holder(str(db), PENDING_BYTE, LOCK_BYTES) or open_by(db)
            by = f" (pid {holder})" if holder else ""
            raise Refused(f"{db}: the database is open in another process{by}; stop it, then restore; not "
                          "restored")
        time.sleep(POLL)
