"""Upsonic PostgresStorage tables through the backend-neutral Store: what the library wrote reads back as on
SQLite, writes are encoded as the library encodes them (JSONB once), and the schema is recognised."""

from __future__ import annotations

import json
import threading
import time

import pytest

from praisonmem.core import upsonic as upsonic_io
from praisonmem.core.errors import CorruptFile, LockTimeout, NotFound, Refused, TargetExists, UsageError
from praisonmem.core.upsonic import Store, from_praisonai, parts, pg_session_ddl, pg_user_memory_ddl, to_praisonai
from tests.conftest import PRAISONAI_FIXTURES
from tests.pgcluster import require_psycopg
from tests.upsonicpg import FIXTURE, load, snapshot


@pytest.fixture
def ups(pg):
    """A test database holding the real PostgresStorage fixture (tables and rows)."""
    require_psycopg()
    load(pg)
    return pg


def raw(db, sql: str, *params):
    psycopg = require_psycopg()
    with psycopg.connect(db.rw_url) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def test_lists_the_library_sessions_as_on_sqlite(ups, db):
    rows = Store(ups.rw_url).sessions()
    assert [r["session_id"] for r in rows] == ["session_002", "session_001", "session_004", "session_003"]
    on_sqlite = {r["session_id"]: r for r in Store(db).sessions()}
    for row in rows:
        mine = on_sqlite[row["session_id"]]
        assert {k: row[k] for k in ("message_count", "run_count", "has_summary", "user_id", "agent_id")} == \
            {k: mine[k] for k in ("message_count", "run_count", "has_summary", "user_id", "agent_id")}
    assert [r["session_id"] for r in Store(ups.rw_url).sessions(user="user_456")] == ["session_003"]
    assert len(Store(ups.ro_url).sessions(limit=2)) == 2
    page, total = Store(ups.ro_url).sessions_page(limit=2)  # the count before the limit, as on SQLite
    assert ([r["session_id"] for r in page], total) == (["session_002", "session_001"], 4)
    assert Store(db).sessions_page(limit=2)[1] == 4
    assert Store(ups.ro_url).sessions_page(user="user_456", limit=1)[1] == 1
    assert Store(ups.ro_url).sessions_page(session_type="team") == ([], 0)
    assert Store(ups.rw_url).sessions(session_type="team") == []


def test_show_gives_the_same_decoded_row_as_the_sqlite_file(ups, db):
    mine, theirs = Store(ups.rw_url).session("session_001"), Store(db).session("session_001")
    assert list(mine) == list(theirs)  # column order is SQLite's, whatever the table's
    for key in ("messages", "metadata", "summary", "usage", "session_data", "agent_data", "team_data"):
        assert mine[key] == theirs[key], key
    assert set(mine["runs"]) == {"run_0001", "run_0002"}
    assert [p["part_kind"] for p in parts(mine["messages"])] == [
        "system-prompt", "user-prompt", "text", "user-prompt", "tool-call", "tool-return", "text"]
    assert Store(ups.rw_url).session("session_004")["session_data"] is None  # JSON null
    with pytest.raises(NotFound, match=f"no Upsonic session 'nope' in postgresql://pm_rw:\\*\\*\\*@127.0.0.1:"):
        Store(ups.rw_url).session("nope")


def test_users_in_the_same_order_and_shape(ups, db):
    assert [u["user_id"] for u in Store(ups.rw_url).users()] == [u["user_id"] for u in Store(db).users()]
    assert Store(ups.rw_url).user("user_456")["user_memory"]["unicode_check"] == "Grüße — 東京 🚀"
    with pytest.raises(NotFound, match="no Upsonic user memory for 'nobody'"):
        Store(ups.rw_url).user("nobody")


def test_set_traits_writes_jsonb_once_and_keeps_the_row(ups):
    before = raw(ups, "SELECT agent_id, team_id, created_at FROM upsonic_user_memories WHERE user_id = 'user_123'")
    Store(ups.rw_url).update_user_memory("user_123", lambda old: {**old, "detected_tone": "formal", "n": 1.0})
    row = raw(ups, "SELECT jsonb_typeof(user_memory), user_memory, agent_id, team_id, created_at, updated_at "
                   "FROM upsonic_user_memories WHERE user_id = 'user_123'")[0]
    assert row[0] == "object" and row[1]["detected_tone"] == "formal" and row[1]["current_goal"] == "track savings"
    assert row[2:5] == before[0] and row[5] >= int(time.time()) - 5
    assert raw(ups, "SELECT user_memory->>'n' FROM upsonic_user_memories WHERE user_id = 'user_123'") == [("1.0",)]


def test_set_for_a_new_user_inserts_a_row_like_the_library(ups):
    result = Store(ups.rw_url).update_user_memory("new_user", lambda old: {**old, "a": "x\x00y"})
    assert result["created"]
    assert raw(ups, "SELECT user_memory::text, agent_id, team_id FROM upsonic_user_memories "
                    "WHERE user_id = 'new_user'") == [('{"a": "xy"}', None, None)]  # NUL stripped, as the library does


def test_an_agent_write_between_read_and_write_aborts(ups, monkeypatch):
    """The row changed to a value Python would call equal (1 vs 1.0): still a change, nothing written."""
    raw(ups, "UPDATE upsonic_user_memories SET user_memory = '{\"score\": 1}' WHERE user_id = 'user_456'")
    real_write = Store.write

    def racing(self, need, body, **kwargs):
        raw(ups, "UPDATE upsonic_user_memories SET user_memory = '{\"score\": 1.0}' WHERE user_id = 'user_456'")
        return real_write(self, need, body, **kwargs)

    monkeypatch.setattr(Store, "write", racing)
    with pytest.raises(Refused, match="changed while praisonmem was editing it"):
        Store(ups.rw_url).update_user_memory("user_456", lambda old: {**old, "x": 1})
    assert raw(ups, "SELECT user_memory::text FROM upsonic_user_memories WHERE user_id = 'user_456'") == [
        ('{"score": 1.0}',)]


def test_a_user_created_meanwhile_is_not_overwritten(ups, monkeypatch):
    real_write = Store.write

    def racing(self, need, body, **kwargs):
        raw(ups, "INSERT INTO upsonic_user_memories VALUES ('late', '{\"agent\": 1}', 'a1', NULL, 5, 5)")
        return real_write(self, need, body, **kwargs)

    monkeypatch.setattr(Store, "write", racing)
    with pytest.raises(Refused, match="changed while praisonmem was editing it"):
        Store(ups.rw_url).update_user_memory("late", lambda old: {"mine": 1})
    assert raw(ups, "SELECT user_memory::text, agent_id FROM upsonic_user_memories WHERE user_id = 'late'") == [
        ('{"agent": 1}', "a1")]


def test_an_edit_waits_for_an_agent_holding_the_row_then_compares(ups):
    """The agent's transaction holds the row; praisonmem's FOR UPDATE waits, then sees the new value: refused."""
    psycopg = require_psycopg()
    agent = psycopg.connect(ups.rw_url)
    agent.execute("UPDATE upsonic_user_memories SET user_memory = '{\"agent\": \"wrote\"}' WHERE user_id = 'user_456'")
    store = Store(ups.rw_url, timeout=10)
    errors: list[BaseException] = []

    def edit() -> None:
        try:
            store.update_user_memory("user_456", lambda old: {**old, "x": 1})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=edit)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive(), "the edit must wait for the agent's row lock"
    agent.commit()
    agent.close()
    thread.join(15)
    assert len(errors) == 1 and isinstance(errors[0], Refused)
    assert raw(ups, "SELECT user_memory FROM upsonic_user_memories WHERE user_id = 'user_456'") == [
        ({"agent": "wrote"},)]


def test_a_row_held_longer_than_the_timeout(ups):
    psycopg = require_psycopg()
    agent = psycopg.connect(ups.rw_url)
    agent.execute("SELECT 1 FROM upsonic_user_memories WHERE user_id = 'user_456' FOR UPDATE")
    before = snapshot(ups)
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="locked by another writer \\(waited 0.3s\\)"):
            Store(ups.rw_url, timeout=0.3).update_user_memory("user_456", lambda old: {**old, "x": 1})
        assert time.monotonic() - started < 5
    finally:
        agent.rollback()
        agent.close()
    assert snapshot(ups) == before


def test_user_memory_that_is_not_an_object_is_refused(ups):
    raw(ups, "UPDATE upsonic_user_memories SET user_memory = '\"a string\"' WHERE user_id = 'user_456'")
    with pytest.raises(CorruptFile, match="not a JSON object"):
        Store(ups.rw_url).update_user_memory("user_456", lambda old: old)


def test_schema_recognition(pg):
    require_psycopg()
    with pytest.raises(NotFound, match="no Upsonic tables \\(public.upsonic_sessions, public.upsonic_user_memories\\) "
                                       f"in database '{pg.name}'"):
        Store(pg.rw_url).sessions()
    assert Store(pg.rw_url).known_ids("sessions") == set()  # import's dry run: nothing there yet
    raw(pg, "CREATE TABLE upsonic_user_memories (user_id varchar PRIMARY KEY, traits jsonb)")
    with pytest.raises(Refused, match="table 'public.upsonic_user_memories' does not have Upsonic 0.77.3's columns "
                                      "\\(missing: agent_id, created_at, team_id, updated_at, user_memory; "
                                      "unexpected: traits\\); refusing to touch it"):
        Store(pg.rw_url).sessions()
    raw(pg, "DROP TABLE upsonic_user_memories")
    for statement in pg_user_memory_ddl("upsonic_user_memories"):
        raw(pg, statement.replace("user_memory JSONB", "user_memory TEXT"))
    with pytest.raises(Refused, match="other types: user_memory text"):
        Store(pg.rw_url).users()


def test_one_table_present_is_an_upsonic_store(pg):
    require_psycopg()
    for statement in pg_user_memory_ddl("upsonic_user_memories"):
        raw(pg, statement)
    assert Store(pg.rw_url).sessions() == []
    Store(pg.rw_url).update_user_memory("u", lambda old: {"a": 1})
    assert Store(pg.rw_url).user("u")["user_memory"] == {"a": 1}


def test_custom_schema_and_table_names_keep_their_case(pg):
    require_psycopg()
    raw(pg, 'CREATE SCHEMA "Team"')
    for statement in pg_session_ddl("My_Sessions", "Team") + pg_user_memory_ddl("my_users", "Team"):
        raw(pg, statement)
    store = Store(pg.rw_url, "My_Sessions", "my_users", schema="Team")
    assert store.sessions() == []
    with pytest.raises(NotFound, match="no Upsonic tables \\(public.My_Sessions, public.my_users\\)"):
        Store(pg.rw_url, "My_Sessions", "my_users").sessions()
    with pytest.raises(NotFound):
        Store(pg.rw_url, "my_sessions", "my_users", schema="team").sessions()
    with pytest.raises(UsageError, match="--schema 'a%b'"):
        Store(pg.rw_url, schema="a%b")


def test_import_into_an_empty_database_creates_the_library_tables(ups, pg_module):
    """The tables praisonmem creates are the ones PostgresStorage creates: same columns, types, keys, indexes."""
    payload = upsonic_io.export(Store(ups.rw_url))
    users, sessions = [payload["users"], payload["sessions"]]
    report = upsonic_io.run_import(Store(pg_module.rw_url, schema="imported"), users, sessions)
    assert {c.action for c in report.changes} == {"inserted"}
    psycopg = require_psycopg()
    with psycopg.connect(pg_module.rw_url) as conn:
        for table, expected in FIXTURE["catalog"].items():
            cols = conn.execute("SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a "
                                "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped "
                                "ORDER BY a.attnum", (f"imported.{table}",)).fetchall()
            indexes = [r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'imported' AND "
                                                  "tablename = %s ORDER BY indexname", (table,))]
            assert [list(c) for c in cols] == expected["columns"]
            assert indexes == [d.replace("public.", "imported.") for d in expected["indexes"]]
            key = "session_id" if table == "upsonic_sessions" else "user_id"
            ours = conn.execute(f"SELECT * FROM imported.{table} ORDER BY {key}").fetchall()
        original = raw(ups, "SELECT * FROM upsonic_sessions ORDER BY session_id")
    with psycopg.connect(pg_module.rw_url) as conn:
        copied = conn.execute("SELECT * FROM imported.upsonic_sessions ORDER BY session_id").fetchall()
    assert copied == original  # every column, JSONB single-encoded as the library stored it
    assert ours == raw(ups, "SELECT * FROM upsonic_user_memories ORDER BY user_id")


def test_sqlite_export_imported_into_postgres_is_stored_as_the_library_would(db, ups, pg_module):
    payload = upsonic_io.export(Store(db))
    upsonic_io.run_import(Store(pg_module.rw_url, schema="from_sqlite"), payload["users"], payload["sessions"])
    psycopg = require_psycopg()
    with psycopg.connect(pg_module.rw_url) as conn:
        mine = conn.execute("SELECT session_id, jsonb_typeof(messages), messages, metadata, usage, team_data IS NULL, "
                            "jsonb_typeof(session_data) FROM from_sqlite.upsonic_sessions ORDER BY 1").fetchall()
    library = raw(ups, "SELECT session_id, jsonb_typeof(messages), messages, metadata, usage, team_data IS NULL, "
                       "jsonb_typeof(session_data) FROM upsonic_sessions ORDER BY 1")
    assert [r[:2] + r[3:] for r in mine] == [r[:2] + r[3:] for r in library]
    assert [r[2] for r in mine] == [r[2] for r in library]


def test_double_encoded_text_moved_into_jsonb_still_reads(ups):
    """A row copied from SQLite as is (a JSON text inside the JSONB) is decoded, and counted."""
    raw(ups, "UPDATE upsonic_sessions SET messages = to_jsonb(messages::text), runs = to_jsonb(runs::text) "
             "WHERE session_id = 'session_001'")
    assert raw(ups, "SELECT jsonb_typeof(messages) FROM upsonic_sessions WHERE session_id = 'session_001'") == [
        ("string",)]
    row = {r["session_id"]: r for r in Store(ups.rw_url).sessions()}["session_001"]
    assert (row["message_count"], row["run_count"]) == (6, 2)
    assert len(Store(ups.rw_url).session("session_001")["messages"]) == 6


def test_convert_from_praisonai_and_back(pg):
    require_psycopg()
    original = json.loads((PRAISONAI_FIXTURES / "home/sessions/compacted-demo.json").read_text())
    store = Store(pg.rw_url)
    upsonic_io.write_converted(store, [from_praisonai(original, now=1_800_000_000)])
    assert raw(pg, "SELECT jsonb_typeof(messages), team_data IS NULL, usage::text FROM upsonic_sessions") == [
        ("array", True, "null")]
    back = to_praisonai(store.session("compacted-demo"))
    texts = [(m["role"], m["content"]) for m in original.get("archived_messages", []) + original["messages"]]
    assert [(m["role"], m["content"]) for m in back["messages"]] == texts
    with pytest.raises(TargetExists):
        upsonic_io.write_converted(store, [from_praisonai(original, now=1_800_000_000)])
