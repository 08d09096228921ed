"""SQL → JSON → SQL gives back the rows praisonai's own conversation store wrote, on SQLite, PostgreSQL and MySQL
(MariaDB): the same columns byte for byte (``state``/``metadata`` unchanged, NULL still NULL, no key added, the
library's row ids and times), read by the library's ``get_session``/``get_messages`` exactly as before, and
nothing of praisonmem's visible through that API, in the JSON the migrate wrote (to the library's own session
loader) or in the side table."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.mariadbserver import require_pymysql
from tests.pgcluster import require_psycopg

RESERVED = "_praisonmem"

# The library's own writes, through its store API: JSON state/metadata, NULLs, {} (kept as {} by the sqlite and
# postgres stores, NULL by MySQL's), tool calls, two messages at the same instant, unicode.
WRITE = """
import json, sys
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
kind, where = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    from praisonai.persistence.conversation.sqlite import SQLiteConversationStore
    st = SQLiteConversationStore(path=where)
elif kind == "pg":
    from praisonai.persistence.conversation.postgres import PostgresConversationStore
    st = PostgresConversationStore(url=where)
else:
    from praisonai.persistence.conversation.mysql import MySQLConversationStore
    st = MySQLConversationStore(url=where)
st.create_session(ConversationSession(session_id="full", user_id="u1", agent_id="ag", name="A name",
    state={"z": 1, "a": [1.5, 2e-06], "nested": {"b": None, "a": "\\u00e9"}, "runtime_state": {"k": 1}},
    metadata={"zz": True, "aa": 0.1, "title": "A title"}, created_at=1796050073.07, updated_at=1796050080.5))
turns = [("user", "hi \\u2600", None, None, {"k": 0}),
         ("assistant", "", [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}], None,
          None),
         ("tool", "done", None, "c1", {}), ("assistant", None, None, None, {"b": [1, 2], "a": "x"})]
for i, (role, content, tc, tcid, md) in enumerate(turns):
    st.add_message("full", ConversationMessage(id=f"m{i}", role=role, content=content, tool_calls=tc,
                   tool_call_id=tcid, metadata=md, created_at=1796050073.0 + i * 0.25))
st.create_session(ConversationSession(session_id="bare", created_at=1796040000.0, updated_at=1796040001.0))
st.add_message("bare", ConversationMessage(id="z-later-id", role="user", content="first", created_at=1796040000.5))
st.add_message("bare", ConversationMessage(id="a-same-instant", role="assistant", content="tie",
                                           created_at=1796040000.5))
st.create_session(ConversationSession(session_id="empty", state={}, metadata={}, created_at=5.0, updated_at=6.0))
st.close()
"""

READ = """
import json, sys
kind, where = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    from praisonai.persistence.conversation.sqlite import SQLiteConversationStore
    st = SQLiteConversationStore(path=where)
elif kind == "pg":
    from praisonai.persistence.conversation.postgres import PostgresConversationStore
    st = PostgresConversationStore(url=where, auto_create_tables=False)
else:
    from praisonai.persistence.conversation.mysql import MySQLConversationStore
    st = MySQLConversationStore(url=where, auto_create_tables=False)
out = {}
for s in st.list_sessions(limit=1000):
    out[s.session_id] = {"session": s.to_dict(), "messages": [m.to_dict() for m in st.get_messages(s.session_id)]}
print(json.dumps(out, sort_keys=True))
"""

LOADER = """
import json, sys
from praisonaiagents.session.store import SessionData
for path in sys.argv[1:]:
    data = SessionData.from_dict(json.load(open(path)))
    print(json.dumps(data.to_dict(), sort_keys=True))
"""


def _roundtrip(oracle, cli, tmp_path, kind: str, first: str, second: str, rows) -> None:
    oracle.run(WRITE, kind, first, cwd=tmp_path)
    before, raw = oracle.json(READ, kind, first, cwd=tmp_path), rows(first)
    out = tmp_path / "json"
    moved = cli("session", "migrate", "--from", first, "--to", out, "--all", "--verify")
    assert moved.exit_code == 0, moved.stderr
    # the JSON the library's session loader reads: no praisonmem key in what it keeps
    loaded = oracle.run(LOADER, *sorted(str(p) for p in out.glob("*.json")), cwd=tmp_path).stdout
    assert loaded.count("\n") == 3 and RESERVED not in loaded
    back = cli("session", "migrate", "--from", out, "--to", second, "--all", "--verify")
    assert back.exit_code == 0, back.stderr
    assert rows(second) == raw
    after = oracle.json(READ, kind, second, cwd=tmp_path)
    assert after == before
    assert RESERVED not in json.dumps(after)


def test_sqlite_to_json_to_sqlite_gives_back_the_librarys_rows(oracle, cli, tmp_path):
    def rows(path: str):
        with sqlite3.connect(path) as conn:
            out = [conn.execute("SELECT * FROM praison_sessions ORDER BY session_id").fetchall(),
                   conn.execute("SELECT * FROM praison_messages ORDER BY id").fetchall()]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "praison_praisonmem_extra" in tables:
                out.append(conn.execute("SELECT * FROM praison_praisonmem_extra").fetchall())
        return out

    _roundtrip(oracle, cli, tmp_path, "sqlite", str(tmp_path / "a.db"), str(tmp_path / "b.db"), rows)


def test_postgres_to_json_to_postgres_gives_back_the_librarys_rows(oracle, cli, pg_cluster, pg, tmp_path):
    require_psycopg()
    other = pg_cluster.create_database("roundtrip")
    try:
        def rows(url: str):
            db = pg if url == pg.rw_url else other
            extra = db.psql("SELECT to_regclass('public.praison_praisonmem_extra') IS NOT NULL").strip() == "t"
            return (db.psql("SELECT s::text FROM praison_sessions s ORDER BY session_id"),
                    db.psql("SELECT m::text FROM praison_messages m ORDER BY id"),
                    db.psql("SELECT count(*) FROM praison_praisonmem_extra").strip() if extra else "0")

        _roundtrip(oracle, cli, tmp_path, "pg", pg.rw_url, other.rw_url, rows)
    finally:
        pg_cluster.drop_database(other.name)


def test_mysql_to_json_to_mysql_gives_back_the_librarys_rows(oracle, cli, mysql_server, mysql, tmp_path):
    require_pymysql()
    other = mysql_server.create_database("roundtrip")
    try:
        def rows(url: str):
            db = mysql if url == mysql.rw_url else other
            return db.sql("SELECT * FROM praison_sessions ORDER BY session_id; SELECT * FROM praison_messages "
                          "ORDER BY id; SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                          "DATABASE() AND table_name = 'praison_praisonmem_extra' AND table_rows > 0")

        _roundtrip(oracle, cli, tmp_path, "mysql", mysql.rw_url, other.rw_url, rows)
    finally:
        mysql_server.drop_database(other.name)


@pytest.mark.parametrize("kind", ["sqlite"])
def test_json_to_sql_puts_no_praisonmem_key_in_a_library_column(oracle, cli, tmp_path, kind):
    """What a JSON session brings that the columns cannot hold is in the side table, not in state/metadata."""
    from tests.conftest import PRAISONAI_FIXTURES

    src = PRAISONAI_FIXTURES / "home" / "sessions"
    db = tmp_path / "c.db"
    assert cli("session", "migrate", "--from", src, "--to", db, "--all").exit_code == 0
    with sqlite3.connect(db) as conn:
        cols = conn.execute("SELECT state, metadata FROM praison_sessions").fetchall()
        cols += conn.execute("SELECT tool_calls, metadata FROM praison_messages").fetchall()
        side = conn.execute("SELECT count(*) FROM praison_praisonmem_extra WHERE message_id = ''").fetchone()[0]
    assert not any(RESERVED in (v or "") for row in cols for v in row)
    assert side == len(list(src.glob("*.json")))


def test_show_and_list_agree_on_a_library_sessions_title_and_times(oracle, cli, tmp_path):
    """The row's name is the title (after metadata.title) and its updated_at the time, in both commands, even when a
    turn was added after it (the library's add_message leaves updated_at as it was)."""
    from praisonmem.core.sessions.stores.conversation_map import iso_epoch

    db = tmp_path / "a.db"
    oracle.run(WRITE, "sqlite", db, cwd=tmp_path)
    rows = {r["session_id"]: r for r in cli("session", "list", "--store", db, "--json").json()}
    assert (rows["bare"]["title"], rows["full"]["title"]) == (None, "A title")
    oracle.run("""
import sys, sqlite3
from praisonai.persistence.conversation.base import ConversationMessage
from praisonai.persistence.conversation.sqlite import SQLiteConversationStore
st = SQLiteConversationStore(path=sys.argv[1])
s = st.get_session("bare"); s.name = "Named only"; st.update_session(s)
st.add_message("bare", ConversationMessage(id="late", role="user", content="a later turn", created_at=1796049999.0))
st.close()
""", db, cwd=tmp_path)
    rows = {r["session_id"]: r for r in cli("session", "list", "--store", db, "--json").json()}
    assert rows["bare"]["title"] == "Named only"
    for sid, row in rows.items():
        doc = cli("session", "show", sid, "--store", db, "--json").json()
        from praisonmem.core.sessions.documents import title_of

        assert title_of(doc) == row["title"], sid
        assert (iso_epoch(doc["created_at"]), iso_epoch(doc["updated_at"])) == (
            iso_epoch(row["created_at"]), iso_epoch(row["updated_at"])), sid
    text = cli("session", "show", "bare", "--store", db).stdout
    assert "Named only" in text
    assert iso_epoch(rows["bare"]["updated_at"]) == 1796040001.0  # the row's, not the later turn's


def test_prune_of_a_sql_store_deletes_the_old_sessions_and_nothing_else(oracle, cli, tmp_path):
    db = tmp_path / "a.db"
    oracle.run(WRITE, "sqlite", db, cwd=tmp_path)
    before = oracle.json(READ, "sqlite", db, cwd=tmp_path)
    pruned = cli("session", "prune", "--older-than", "365d", "--store", db, "--yes")
    assert pruned.exit_code == 0, pruned.stderr
    after = oracle.json(READ, "sqlite", db, cwd=tmp_path)
    assert after == {k: v for k, v in before.items() if k != "empty"}  # updated_at 6.0: 1970


def test_real_agents_sqlite_store_to_json_to_sqlite_gives_back_every_row(oracle, cli, tmp_path):
    """The shipped store real Agents wrote (tool calls, a resume, NULL columns, equal created_at values, an empty
    session): every row back, byte for byte, and the library's own reads equal."""
    import shutil

    from tests.conftest import REPO

    first = tmp_path / "a.db"
    shutil.copy(REPO / "tests" / "fixtures" / "praisonai-4.7.19-conversations" / "praisonai_conversations.db", first)

    def rows(path: str):
        with sqlite3.connect(path) as conn:
            return [conn.execute("SELECT * FROM praison_sessions ORDER BY session_id").fetchall(),
                    conn.execute("SELECT * FROM praison_messages ORDER BY session_id, created_at, rowid").fetchall()]

    raw, before = rows(str(first)), oracle.json(READ, "sqlite", first, cwd=tmp_path)
    out = tmp_path / "json"
    assert cli("session", "migrate", "--from", first, "--to", out, "--all", "--verify").exit_code == 0
    second = tmp_path / "b.db"
    back = cli("session", "migrate", "--from", out, "--to", second, "--all", "--verify")
    assert back.exit_code == 0, back.stderr
    assert rows(str(second)) == raw
    assert oracle.json(READ, "sqlite", second, cwd=tmp_path) == before
