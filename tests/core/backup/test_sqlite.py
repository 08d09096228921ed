"""The session stores' databases in a backup: taken without a change on disk, checked for damage and for
being their store, put back only while SQLite's own locks say nobody has them."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from praisonmem.core import layout
from praisonmem.core.backup import sqlite as backup_sqlite
from praisonmem.core.errors import Refused
from tests.sqlitestate import crashed_wal, live_wal

TRANSCRIPT = ("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, data TEXT, agent_name TEXT, "
              "gateway_session_id TEXT, agent_id TEXT, updated_at REAL)")


def transcript_db(path: Path, *, wal: bool = True) -> Path:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(TRANSCRIPT)
    conn.execute("INSERT INTO sessions (session_id, data) VALUES ('a', '{}')")
    conn.commit()
    conn.close()
    return path


def state(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def rows(data: bytes, tmp_path: Path) -> list[str]:
    copy = tmp_path / "copy.db"  # beside the directory the database is in
    copy.write_bytes(data)
    with sqlite3.connect(copy) as conn:
        return [r[0] for r in conn.execute("SELECT session_id FROM sessions ORDER BY 1")]


@pytest.mark.parametrize("name, sidecar", [("sessions.db-wal", True), ("sessions.db-shm", True),
                                           ("sessions_index.db-journal", True), ("sessions.db", False),
                                           ("other.db-wal", False), ("sessions.db-wal.bak", False)])
def test_a_sidecar_is_a_store_s_own_wal_shm_or_journal(name, sidecar):
    assert layout.is_db_sidecar(name) is sidecar


def test_pending_changes_are_frames_in_the_wal_or_any_journal(tmp_path):
    db = transcript_db(tmp_path / "sessions.db")
    assert backup_sqlite.pending_changes(db) is None
    Path(f"{db}-wal").write_bytes(b"")
    assert backup_sqlite.pending_changes(db) is None  # an empty -wal holds nothing
    Path(f"{db}-journal").write_bytes(b"")
    assert backup_sqlite.pending_changes(db) == "sessions.db-journal"  # a journal, even empty: a writer died
    Path(f"{db}-wal").write_bytes(b"x")
    assert backup_sqlite.pending_changes(db) == "sessions.db-wal"


def test_quick_check_and_the_store_s_schema(tmp_path):
    db = transcript_db(tmp_path / "sessions.db")
    assert backup_sqlite.quick_check(db) is None and backup_sqlite.schema_problem(db, "sessions.db") is None
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    assert backup_sqlite.quick_check(garbage).startswith("SQLite cannot read it: ")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE sessions (session_id TEXT, data TEXT)")
    assert backup_sqlite.schema_problem(other, "sessions.db") is not None
    viewed = tmp_path / "viewed.db"
    with sqlite3.connect(viewed) as conn:
        conn.execute("CREATE TABLE t (session_id TEXT, data TEXT, agent_name TEXT, gateway_session_id TEXT, "
                     "agent_id TEXT, updated_at REAL)")
        conn.execute("CREATE VIEW sessions AS SELECT * FROM t")
    assert backup_sqlite.schema_problem(viewed, "sessions.db") is not None


@pytest.fixture
def db(tmp_path) -> Path:
    (tmp_path / "sessions").mkdir()
    return transcript_db(tmp_path / "sessions" / "sessions.db")


def test_a_snapshot_of_an_idle_database_changes_nothing_and_creates_no_sidecar(db, tmp_path):
    before = state(db.parent)
    data, damage = backup_sqlite.snapshot(db, timeout=5)
    assert (damage, rows(data, tmp_path), state(db.parent)) == (None, ["a"], before)
    assert sorted(before) == ["sessions.db"]


def test_a_snapshot_holds_the_frames_a_dead_writer_left_and_leaves_them_as_they_are(db, tmp_path):
    crashed_wal(db, "INSERT INTO sessions (session_id, data) VALUES ('b', '{}')")
    assert backup_sqlite.pending_changes(db) == "sessions.db-wal"
    before = state(db.parent)
    data, damage = backup_sqlite.snapshot(db, timeout=5)
    assert (damage, rows(data, tmp_path)) == (None, ["a", "b"])
    assert state(db.parent) == before  # no recovery ran on the user's files


def test_a_snapshot_while_a_writer_has_it_open_holds_its_committed_rows(db, tmp_path):
    with live_wal(db, "INSERT INTO sessions (session_id, data) VALUES ('c', '{}')") as pid:
        assert backup_sqlite.open_by(db) == pid
        data, damage = backup_sqlite.snapshot(db, timeout=5)
    assert (damage, rows(data, tmp_path)) == (None, ["a", "c"])
    assert backup_sqlite.open_by(db) is None


def test_a_database_sqlite_cannot_read_is_taken_as_it_is_marked(tmp_path):
    db = tmp_path / "sessions.db"
    db.write_bytes(b"not a database at all")
    data, damage = backup_sqlite.snapshot(db, timeout=5)
    assert data == b"not a database at all" and damage.startswith("SQLite cannot read it (")


def test_a_database_that_is_not_its_store_refuses_the_backup(tmp_path):
    db = tmp_path / "sessions.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (session_id TEXT, data TEXT)")
    with pytest.raises(Refused, match="not a store as its library writes it, backup not written"):
        backup_sqlite.check_source(db, timeout=5)


def test_exclusive_refuses_while_a_process_has_it_open_or_a_dead_writer_s_frames_wait(tmp_path):
    db = transcript_db(tmp_path / "sessions.db")
    with backup_sqlite.exclusive(db, timeout=0.1):
        pass
    with backup_sqlite.exclusive(tmp_path / "absent.db", timeout=0.1):  # nothing to lock yet
        pass
    with live_wal(db, "INSERT INTO sessions (session_id, data) VALUES ('c', '{}')") as pid:
        with pytest.raises(Refused, match=rf"the database is open in another process \(pid {pid}\)"):
            with backup_sqlite.exclusive(db, timeout=0.1):
                pass
    crashed_wal(db, "INSERT INTO sessions (session_id, data) VALUES ('d', '{}')")
    with pytest.raises(Refused, match="sessions.db-wal beside it holds changes a writer did not finish"):
        with backup_sqlite.exclusive(db, timeout=0.1):
            pass
    assert not os.path.exists(tmp_path / "absent.db")
