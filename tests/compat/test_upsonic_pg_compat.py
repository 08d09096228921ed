"""The real Upsonic 0.77.3 PostgresStorage and praisonmem on the same PostgreSQL database, both ways."""

from __future__ import annotations

import json

import pytest

from tests.cli.commands.test_upsonic_pg import SHOWN_PG
from tests.compat.conftest import last_json, run_library
from tests.conftest import FIXTURES
from tests.helpers import normalise_times
from tests.pgcluster import require_psycopg

pytest.importorskip("upsonic")

UPSONIC_ENV = {"UPSONIC_TELEMETRY": "false"}
GENERATOR = FIXTURES / "tools" / "gen_upsonic_fixtures.py"


def library(code: str, url: str, tmp_path, *args: str):
    """Run a snippet against the library, ``sys.argv[1]`` its SQLAlchemy URL: psycopg 3 named explicitly
    (SQLAlchemy 2.1 picks it for postgresql:// anyway; 2.0 would pick psycopg2, which is not installed)."""
    url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    return last_json(run_library(code, url, *args, home=tmp_path, **UPSONIC_ENV))


def test_praisonmem_lists_shows_and_exports_what_postgres_storage_wrote(cli, pg, tmp_path):
    require_psycopg()
    seen = library(f"""
        import asyncio, importlib.util, json, sys
        from pathlib import Path
        spec = importlib.util.spec_from_file_location("ugen", {str(GENERATOR)!r})
        ugen = importlib.util.module_from_spec(spec); spec.loader.exec_module(ugen)
        from upsonic.storage.postgres import PostgresStorage
        ugen.SqliteStorage = lambda db_file: PostgresStorage(db_url=sys.argv[1])
        asyncio.run(ugen.main(Path("/nonexistent/unused.db")))
        storage = PostgresStorage(db_url=sys.argv[1])
        rows, total = storage.get_sessions(deserialize=False)
        users, count = storage.get_user_memories(deserialize=False)
        print(json.dumps({{"sessions": {{r["session_id"]: {{k: r[k] for k in ("messages", "metadata", "summary", "usage",
                                                                           "user_id", "created_at")}} for r in rows}},
                          "users": {{u["user_id"]: u["user_memory"] for u in users}}}}))
        storage.close()
    """, pg.rw_url, tmp_path)
    listed = cli("upsonic", "sessions", "--db", pg.rw_url, "--json").json()
    assert sorted(r["session_id"] for r in listed) == sorted(seen["sessions"])
    assert {r["session_id"]: r["message_count"] for r in listed} == {
        k: len(v["messages"]) for k, v in seen["sessions"].items()}
    for session_id, theirs in seen["sessions"].items():
        mine = cli("upsonic", "show", session_id, "--db", pg.ro_url, "--json").json()
        assert {k: mine[k] for k in theirs} == theirs, session_id
    shown = cli("upsonic", "show", "session_001", "--db", pg.rw_url, "--runs")
    assert (shown.exit_code, normalise_times(shown.stdout)) == (0, SHOWN_PG)
    for user_id, memory in seen["users"].items():
        assert cli("upsonic", "user-memory", user_id, "--db", pg.rw_url, "--json").json()["user_memory"] == memory
    out = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", pg.rw_url, "-o", out).exit_code == 0
    payload = json.loads(out.read_text())
    assert {s["session_id"]: s["messages"] for s in payload["sessions"]} == {
        k: v["messages"] for k, v in seen["sessions"].items()}


def test_postgres_storage_reads_what_praisonmem_wrote(cli, db, pg, tmp_path, fixture_home):
    """Import (tables created by praisonmem), a trait edit, a conversion: the library loads all of it typed."""
    require_psycopg()
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", db, "-o", export).exit_code == 0
    assert cli("upsonic", "import", export, "--db", pg.rw_url).exit_code == 0
    assert cli("upsonic", "user-memory", "set", "user_123", "detected_tone=formal", 'key_entities={"bank": "N26"}',
               "--db", pg.rw_url).exit_code == 0
    assert cli("upsonic", "user-memory", "set", "fresh_user", "a=1", "--db", pg.rw_url).exit_code == 0
    assert cli("--home", fixture_home, "upsonic", "convert", "history_ec9d38c8", "compacted-demo", "--from-praisonai",
               "--db", pg.rw_url).exit_code == 0
    seen = library("""
        import json, sys
        from upsonic.storage.postgres import PostgresStorage
        from upsonic.messages.messages import ModelMessagesTypeAdapter
        storage = PostgresStorage(db_url=sys.argv[1])
        rows, total = storage.get_sessions(deserialize=False)
        users, count = storage.get_user_memories(deserialize=False)
        memory = storage.get_user_memory(user_id="user_123", agent_id="agent_fin")
        fresh = storage.get_user_memory(user_id="fresh_user")
        session = storage.get_session(session_id="session_003")
        raw = storage.get_session(session_id="history_ec9d38c8", deserialize=False)
        messages = ModelMessagesTypeAdapter.validate_python(raw["messages"])
        typed = storage.get_session(session_id="compacted-demo")
        storage.upsert_user_memory(memory)  # and the library can write to the tables praisonmem created
        print(json.dumps({"total": total, "users": count, "traits": memory.user_memory,
                          "fresh": [fresh.user_memory, fresh.agent_id],
                          "messages": len(session.messages), "metadata": session.metadata,
                          "kinds": [m.kind for m in messages],
                          "parts": [type(p).__name__ for m in messages for p in m.parts],
                          "typed_messages": len(typed.messages), "summary": typed.summary}))
        storage.close()
    """, pg.rw_url, tmp_path)
    assert (seen["total"], seen["users"], seen["messages"]) == (6, 3, 2)
    assert seen["metadata"] == {"channel": "slack", "tags": ["de", "support"]}
    assert seen["traits"]["detected_tone"] == "formal" and seen["traits"]["key_entities"] == {"bank": "N26"}
    assert seen["traits"]["current_goal"] == "track savings"
    assert seen["fresh"] == [{"a": 1}, None]
    assert seen["kinds"] == ["request", "response", "request", "response"]
    assert seen["parts"] == ["UserPromptPart", "ToolCallPart", "ToolReturnPart", "TextPart"]
    assert seen["typed_messages"] == 10 and seen["summary"].startswith("User is planning a May trip")


def test_the_tables_praisonmem_creates_are_the_ones_postgres_storage_creates(cli, db, pg, pg_module, tmp_path):
    """Same columns, types, NOT NULLs, keys and indexes, with a custom schema and custom table names."""
    psycopg = require_psycopg()
    export = tmp_path / "export.json"
    cli("upsonic", "export", "--db", db, "-o", export)
    names = ["--schema", "Team", "--session-table", "My_Sessions", "--user-memory-table", "my_users"]
    assert cli("upsonic", "import", export, "--db", pg.rw_url, *names).exit_code == 0
    library("""
        import json, sys
        from upsonic.storage.postgres import PostgresStorage
        storage = PostgresStorage(db_url=sys.argv[1], db_schema="Team", session_table="My_Sessions",
                                  user_memory_table="my_users")
        storage._get_session_table(create_if_not_found=True)
        storage._get_user_memory_table(create_if_not_found=True)
        print(json.dumps(True))
        storage.close()
    """, pg_module.rw_url, tmp_path)

    def catalog(url: str) -> list:
        with psycopg.connect(url) as conn:
            return conn.execute(
                "SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
                "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'Team' AND a.attnum > 0 ORDER BY 1, 2").fetchall() + conn.execute(
                "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'Team' ORDER BY 1, 2"
            ).fetchall()

    mine, theirs = catalog(pg.rw_url), catalog(pg_module.rw_url)
    assert mine == theirs and len(theirs) > 20
    assert cli("upsonic", "sessions", "--db", pg_module.rw_url, *names, "--json").json() == []
