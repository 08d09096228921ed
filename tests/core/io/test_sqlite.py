"""Reading SQLite files without side effects: every WAL state a reader meets in a real home.

Each test snapshots the database and its ``-wal``/``-shm`` (bytes, mtime, mode, the file list) around
one read through :func:`praisonmem.core.io.sqlite.connect_ro` and checks the read saw the committed data.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from praisonmem.core.io.sqlite import connect_ro, wal_state
from tests.helpers import snapshot
from tests.sqlitestate import crashed_wal, live_wal, shm_lock_holder


def read_ids(db: Path) -> set[str]:
    conn = connect_ro(db)
    try:
        return {r[0] for r in conn.execute("SELECT session_id FROM sessions")}
    finally:
        conn.close()


ALL = {"agent-chat-1", "bot_telegram_42", "db5b5fab", "enc-db-1", "gw-1", "gw-legacy", "tui0001a", "tui0002b"}


def test_a_cleanly_closed_wal_database_is_read_without_creating_sidecars(gateway_home):
    before = snapshot(gateway_home.sessions)
    assert wal_state(gateway_home.db) == "idle"
    assert read_ids(gateway_home.db) == ALL
    assert snapshot(gateway_home.sessions) == before


def test_a_crashed_writers_frames_are_read_and_its_sidecars_stay_byte_identical(gateway_home):
    db = gateway_home.db
    crashed_wal(db, "DELETE FROM sessions WHERE session_id = ?", "gw-1")
    assert shm_lock_holder(db) is None and Path(f"{db}-wal").stat().st_size > 0
    before = snapshot(gateway_home.sessions)
    assert wal_state(db) == "idle-frames"
    assert read_ids(db) == ALL - {"gw-1"}  # the committed delete, only in -wal
    assert snapshot(gateway_home.sessions) == before  # -shm not rebuilt, nothing checkpointed


def test_frames_in_a_wal_without_its_shm_are_not_ignored(gateway_home):
    db = gateway_home.db
    crashed_wal(db, "DELETE FROM sessions WHERE session_id = ?", "gw-1")
    os.unlink(f"{db}-shm")
    before = snapshot(gateway_home.sessions)
    assert read_ids(db) == ALL - {"gw-1"}  # immutable=1 would still show gw-1
    assert snapshot(gateway_home.sessions) == before


def test_a_live_writers_database_is_read_changing_only_shm_read_marks(gateway_home):
    db = gateway_home.db
    with live_wal(db, "DELETE FROM sessions WHERE session_id = ?", "gw-1") as pid:
        assert shm_lock_holder(db) == pid
        before = snapshot(gateway_home.sessions)
        assert wal_state(db) == "live"
        assert read_ids(db) == ALL - {"gw-1"}
        after = snapshot(gateway_home.sessions)
        shm = "sessions.db-shm"
        # SQLite's read marks live in the mmap'd -shm; a live read cannot avoid writing them,
        # and the kernel then refreshes its mtime too. Its mode and size stay; every other file is untouched.
        assert {k: v for k, v in after.items() if k != shm} == {k: v for k, v in before.items() if k != shm}
        assert (after[shm][0], after[shm][2]) == (before[shm][0], before[shm][2])


def test_a_rollback_journal_database_is_read_without_creating_anything(tmp_path):
    db = tmp_path / "plain.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sessions (session_id TEXT PRIMARY KEY)")
    conn.execute("INSERT INTO sessions VALUES ('a')")
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    assert wal_state(db) == "rollback"
    assert read_ids(db) == {"a"}
    assert snapshot(tmp_path) == before


def test_the_private_copy_is_gone_after_close(gateway_home, monkeypatch, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    crashed_wal(gateway_home.db, "DELETE FROM sessions WHERE session_id = ?", "gw-1")
    conn = connect_ro(gateway_home.db)
    copies = list(scratch.iterdir())
    assert len(copies) == 1 and oct(copies[0].stat().st_mode & 0o777) == "0o700"
    conn.close()
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("state", ["missing", "directory"])
def test_what_is_not_a_database_file_is_refused(tmp_path, state):
    from praisonmem.core.errors import NotFound, UsageError

    path = tmp_path / "x.db"
    if state == "directory":
        path.mkdir()
    with pytest.raises(UsageError if state == "directory" else NotFound):
        connect_ro(path)
    assert (path.is_dir() if state == "directory" else not path.exists())


def test_delete_in_removes_every_id_in_batches_that_stay_under_sqlites_parameter_limit():
    from praisonmem.core.io.sqlite import DELETE_BATCH, delete_in

    conn = sqlite3.connect(":memory:")
    conn.execute('CREATE TABLE "my table" (id TEXT PRIMARY KEY, v INTEGER)')
    conn.executemany('INSERT INTO "my table" VALUES (?, ?)', [(f"r{i}", i) for i in range(2 * DELETE_BATCH + 7)])
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    doomed = [f"r{i}" for i in range(0, 2 * DELETE_BATCH + 7, 2)] + ["absent"]  # 505 ids, one not there
    assert delete_in(conn, '"my table"', "id", doomed) == len(doomed) - 1
    deletes = [s for s in statements if s.startswith("DELETE")]
    assert len(deletes) == 2 and DELETE_BATCH == 500  # 500 ids, then the other 5
    assert [s.count("'") // 2 for s in deletes] == [500, 5]
    left = [r[0] for r in conn.execute('SELECT id FROM "my table" ORDER BY v')]
    assert left == [f"r{i}" for i in range(1, 2 * DELETE_BATCH + 7, 2)]
    assert delete_in(conn, '"my table"', "id", []) == 0
