"""Upsonic SqliteStorage over plain sqlite3: schema checks, reads and trait edits."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from praisonmem.core.errors import CorruptFile, LockTimeout, NotFound, Refused
from praisonmem.core.upsonic import Store, parts, session_ddl, user_memory_ddl
from tests.helpers import hold_sqlite_lock


def test_lists_every_session_including_a_null_user(db):
    rows = Store(db).sessions()
    assert [r["session_id"] for r in rows] == ["session_002", "session_001", "session_004", "session_003"]
    by_id = {r["session_id"]: r for r in rows}
    assert (by_id["session_001"]["message_count"], by_id["session_001"]["run_count"]) == (6, 2)
    assert by_id["session_004"]["user_id"] is None and by_id["session_004"]["message_count"] == 0
    assert by_id["session_003"]["has_summary"] is True
    assert [r["session_id"] for r in Store(db).sessions(user="user_456")] == ["session_003"]
    assert len(Store(db).sessions(limit=2)) == 2


def test_show_decodes_double_and_single_encoded_columns(db):
    row = Store(db).session("session_001")
    assert row["metadata"] == {"channel": "web", "locale": "en-US"}
    assert row["usage"]["input_tokens"] == 300 and len(row["messages"]) == 6
    assert set(row["runs"]) == {"run_0001", "run_0002"}
    kinds = [p["part_kind"] for p in parts(row["messages"])]
    assert kinds == ["system-prompt", "user-prompt", "text", "user-prompt", "tool-call", "tool-return", "text"]
    assert Store(db).session("session_004")["session_data"] is None  # the text 'null'


def test_users_and_missing_rows(db):
    assert [u["user_id"] for u in Store(db).users()] == ["user_456", "user_123"]  # updated_at DESC, as the library
    assert Store(db).user("user_456")["user_memory"]["unicode_check"] == "Grüße — 東京 🚀"
    with pytest.raises(NotFound):
        Store(db).user("nobody")
    with pytest.raises(NotFound):
        Store(db).session("nope")


def test_set_traits_writes_single_encoded_and_keeps_the_row(db):
    store = Store(db)
    store.update_user_memory("user_123", lambda old: {**old, "detected_tone": "formal"})
    raw = sqlite3.connect(db).execute("SELECT user_memory, agent_id, created_at, updated_at FROM "
                                      "upsonic_user_memories WHERE user_id = 'user_123'").fetchone()
    expected = {**json.loads(raw[0]), "detected_tone": "formal"}
    assert raw[0] == json.dumps(expected)
    assert (raw[1], raw[2]) == ("agent_fin", 1736931600) and raw[3] >= int(time.time()) - 5


def test_set_for_a_new_user_creates_the_row(db):
    result = Store(db).update_user_memory("new_user", lambda old: {**old, "a": 1})
    assert result["created"] and Store(db).user("new_user")["user_memory"] == {"a": 1}


def test_an_agent_write_between_read_and_write_aborts(db, monkeypatch):
    store = Store(db)
    real_write = Store.write

    def racing(self, need, body, **kwargs):
        other = sqlite3.connect(db)
        other.execute("UPDATE upsonic_user_memories SET user_memory = '{\"agent\": \"wrote\"}' "
                      "WHERE user_id = 'user_456'")
        other.commit()
        other.close()
        return real_write(self, need, body, **kwargs)

    monkeypatch.setattr(Store, "write", racing)
    with pytest.raises(Refused, match="changed while praisonmem was editing it"):
        store.update_user_memory("user_456", lambda old: {**old, "x": 1})
    assert Store(db).user("user_456")["user_memory"] == {"agent": "wrote"}


def test_not_an_sqlite_file_no_tables_and_other_columns(tmp_path, db):
    text = tmp_path / "notes.db"
    text.write_text("this is not a database, just text " * 20)
    with pytest.raises(Refused, match="not an SQLite database"):
        Store(text).sessions()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x)").connection.commit()
    with pytest.raises(Refused, match="no table 'upsonic_sessions'"):
        Store(empty).sessions()
    odd = tmp_path / "odd.db"
    conn = sqlite3.connect(odd)
    conn.execute("CREATE TABLE upsonic_user_memories (user_id, user_memory, extra)")
    conn.commit()
    with pytest.raises(Refused, match="missing: agent_id, created_at, team_id, updated_at; unexpected: extra"):
        Store(odd).users()
    with pytest.raises(Refused):
        Store(odd).update_user_memory("u", lambda old: {"a": 1})
    assert [r[0] for r in sqlite3.connect(odd).execute("SELECT count(*) FROM upsonic_user_memories")] == [0]
    with pytest.raises(NotFound):
        Store(tmp_path / "missing.db").sessions()


def test_custom_table_names(tmp_path):
    path = tmp_path / "custom.db"
    conn = sqlite3.connect(path)
    for statement in session_ddl("my_sessions") + user_memory_ddl("my_users"):
        conn.execute(statement)
    conn.commit()
    assert Store(path, "my_sessions", "my_users").sessions() == []
    with pytest.raises(Refused, match="--session-table"):
        Store(path).sessions()


def test_a_busy_database_is_a_clear_error_not_a_hang(db):
    holder = hold_sqlite_lock(db, 10)
    before = db.read_bytes()
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="database is locked by another writer"):
            Store(db, timeout=0.3).update_user_memory("user_456", lambda old: {**old, "x": 1})
        with pytest.raises(LockTimeout):
            Store(db, timeout=0.3).sessions()
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
    assert db.read_bytes() == before


def test_wal_databases_work_for_reads_and_writes(db):
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    assert len(Store(db).sessions()) == 4
    Store(db).update_user_memory("user_456", lambda old: {**old, "wal": True})
    assert Store(db).user("user_456")["user_memory"]["wal"] is True


def test_a_crashed_writers_wal_is_read_and_its_sidecars_left_as_they_were(db):
    """The Upsonic reader shares core/io/sqlite.connect_ro: a writer that died leaves frames in -wal and an
    unlocked -shm, which a plain mode=ro open would rebuild and an immutable one would not see."""
    from tests.helpers import snapshot
    from tests.sqlitestate import crashed_wal

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    crashed_wal(db, "UPDATE upsonic_user_memories SET user_memory = ? WHERE user_id = 'user_456'", '{"in": "wal"}')
    before = snapshot(db.parent)
    assert Store(db).user("user_456")["user_memory"] == {"in": "wal"}
    assert snapshot(db.parent) == before


def test_user_memory_that_is_not_an_object_is_refused(db):
    conn = sqlite3.connect(db)
    conn.execute("UPDATE upsonic_user_memories SET user_memory = '\"a string\"' WHERE user_id = 'user_456'")
    conn.commit()
    with pytest.raises(CorruptFile, match="not a JSON object"):
        Store(db).update_user_memory("user_456", lambda old: old)
