"""Opening SQLite files safely: read-only for readers, a bounded busy timeout for writers."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound, UsageError


def _is_idle_wal(path: Path) -> bool:
    """A WAL database no connection has open: read-only opens would leave -wal/-shm files behind."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    wal = len(header) == 20 and header.startswith(b"SQLite format 3\x00") and header[18] == 2 and header[19] == 2
    return wal and not Path(f"{path}-shm").exists()


def connect_ro(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """``mode=ro``: never creates the file, a table, or a journal-mode change.

    A WAL file that no process has open (no ``-shm``) is opened ``immutable``: an
    ordinary read-only open would create ``-wal``/``-shm`` files and leave them;
    with nothing open on it, nothing can change it during the read.
    """
    if not path.is_file():
        if path.exists():
            raise UsageError(f"{path}: not a database file (a directory or device)")
        raise NotFound(f"{path}: no such database")
    uri = path.absolute().as_uri() + ("?mode=ro&immutable=1" if _is_idle_wal(path) else "?mode=ro")
    try:
        return sqlite3.connect(uri, uri=True, timeout=timeout)
    except sqlite3.Error as exc:
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


def _create_private(path: Path) -> None:
    """An empty file is an empty SQLite database; one that exists keeps its mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def translate(exc: sqlite3.Error, path: Path, timeout: float) -> Exception:
    """A one-line praisonmem error for an SQLite failure."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return LockTimeout(f"{path}: database is locked by another writer (waited {timeout:g}s); nothing changed")
    if "file is not a database" in text or "malformed" in text:
        return CorruptFile(str(path), text)
    return IOFailure(f"{path}: {text}")
