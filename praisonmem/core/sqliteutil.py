"""Opening SQLite files safely: read-only for readers, a bounded busy timeout for writers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from praisonmem.core.errors import IOFailure, LockTimeout, NotFound


def connect_ro(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """``mode=ro``: never creates the file, a table, or a journal-mode change."""
    if not path.is_file():
        raise NotFound(f"{path}: no such database")
    uri = path.absolute().as_uri() + "?mode=ro"
    try:
        return sqlite3.connect(uri, uri=True, timeout=timeout)
    except sqlite3.Error as exc:
        raise IOFailure(f"{path}: cannot open: {exc}") from exc


def connect_rw(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(str(path), timeout=timeout)
    except (OSError, sqlite3.Error) as exc:
        raise IOFailure(f"{path}: cannot open: {exc}") from exc


def translate(exc: sqlite3.Error, path: Path, timeout: float) -> Exception:
    """A one-line praisonmem error for an SQLite failure."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return LockTimeout(f"{path}: database is locked by another writer (waited {timeout:g}s); nothing changed")
    if "file is not a database" in text or "malformed" in text:
        from praisonmem.core.errors import CorruptFile

        return CorruptFile(str(path), text)
    return IOFailure(f"{path}: {text}")
