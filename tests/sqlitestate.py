"""Put a WAL database into the states a reader meets in a real home (the fixtures ship none).

The fixture databases were closed cleanly (WAL header, no ``-wal``/``-shm``). A test that needs
the other states makes them on its copy:

* :func:`live_wal`: a writer process keeps the database open with committed but uncheckpointed
  frames in ``-wal``; its ``-shm`` exists and its DMS read lock (byte 128) is held, as while the
  gateway runs.
* :func:`crashed_wal`: the same frames, left by a writer that died without closing: ``-wal`` with
  frames, a ``-shm`` that nobody locks.

Both use plain ``sqlite3`` in a child process (not a library: this only makes file states); the
statement is the caller's, run in autocommit mode with automatic checkpoints off.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_WRITER = textwrap.dedent("""
    import os, sqlite3, sys
    db, sql, mode = sys.argv[1:4]
    params = sys.argv[4:]
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint=0")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "not a WAL database"
    con.execute(sql, params)
    print("ready", flush=True)
    if mode == "crash":
        os._exit(0)          # no close: -wal and -shm stay as a killed writer leaves them
    sys.stdin.read()          # hold the connection until the test is done
    con.close()
""")


def _writer(db: Path, sql: str, params: tuple[str, ...], mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(db), sql, mode, *params],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"WAL writer failed: {proc.stderr.read()}")
    return proc


@contextmanager
def live_wal(db: Path, sql: str, *params: str) -> Iterator[int]:
    """Run ``sql`` on ``db`` in a writer that stays connected; yields its pid, closes it after."""
    proc = _writer(db, sql, params, "live")
    try:
        yield proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def crashed_wal(db: Path, sql: str, *params: str) -> None:
    """Run ``sql`` on ``db`` in a writer that exits without closing (frames left in ``-wal``)."""
    proc = _writer(db, sql, params, "crash")
    proc.wait(timeout=30)


def shm_lock_holder(db: Path) -> int | None:
    """pid holding the DMS lock on ``db-shm`` (an open WAL connection), or None (Linux x86_64)."""
    try:
        fd = os.open(f"{db}-shm", os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))
    finally:
        os.close(fd)
    return None if kind == fcntl.F_UNLCK else pid


_KILLED_MID_WRITE = textwrap.dedent("""
    import os, sqlite3, sys
    db, sql = sys.argv[1:3]
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA cache_size=1")  # dirty pages spill into the database file before the commit
    con.execute("BEGIN IMMEDIATE")
    for statement in sql.split(";"):
        if statement.strip():
            con.execute(statement)
    os._exit(0)  # no commit, no rollback: a hot journal, as a writer killed mid-transaction leaves it
""")


def killed_mid_write(db: Path, sql: str) -> None:
    """Run the ``;``-separated ``sql`` on the rollback-journal database ``db`` (created if missing) in a writer
    that dies before its commit, once its changes reached the file: ``db-journal`` is hot."""
    subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(db), sql], check=True, timeout=30)
    assert Path(f"{db}-journal").is_file()
