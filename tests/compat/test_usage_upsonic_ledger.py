"""`praisonmem usage` reads the usage registry's ledger the real upsonic 0.77.3 writes (upsonic_usage_entries):
a session without a usage column gets its runs' entries, a session with one is not counted twice, and an entry of
no session's run is said, not counted."""

from __future__ import annotations

import json
import sqlite3

from tests.compat.conftest import run_library
from tests.helpers import snapshot

LEDGER = """
    import json, sys
    from upsonic.storage.sqlite import SqliteStorage
    from upsonic.usage_registry.entry import UsageEntry
    storage = SqliteStorage(db_file=sys.argv[1])
    for spec in json.loads(sys.argv[2]):
        storage.upsert_usage_entry(UsageEntry(**spec).to_dict())
"""

ENTRIES = [  # run_0001 and run_0002 are session_001's runs, run_0003 session_002's
    {"entry_id": "e1", "run_id": "run_0001", "model": "openai/gpt-4o", "input_tokens": 120, "output_tokens": 18,
     "cost_usd": 0.0005, "requests": 1},
    {"entry_id": "e2", "run_id": "run_0002", "model": "openai/gpt-4o", "input_tokens": 200, "output_tokens": 40,
     "cost_usd": None, "requests": 1},
    {"entry_id": "e3", "run_id": "run_0003", "input_tokens": 999, "output_tokens": 999, "cost_usd": 1.0},
    {"entry_id": "e4", "run_id": "run_elsewhere", "input_tokens": 7, "output_tokens": 7},
]


def test_ledger_rows_count_for_the_sessions_whose_usage_column_is_null(cli, db, fixture_home):
    with sqlite3.connect(db) as conn:  # as for a session the library upserted without a TaskUsage
        conn.execute("UPDATE upsonic_sessions SET usage = 'null' WHERE session_id = 'session_001'")
    conn.close()
    run_library(LEDGER, str(db), json.dumps(ENTRIES), home=fixture_home)
    before = snapshot(db.parent)
    report = cli("--home", fixture_home, "usage", "--store", db, "--by", "session", "--json").json()
    rows = {r["session"]: r for r in report["rows"]}
    assert rows["session_001"] == {
        "session": "session_001", "store": f"upsonic:{db}", "sessions": 1, "sessions_without_usage": 0, "turns": 2,
        "prompt_tokens": 120 + 200, "completion_tokens": 18 + 40, "total_tokens": 120 + 200 + 18 + 40,
        "cost": 0.0005}
    assert (rows["session_002"]["prompt_tokens"], rows["session_002"]["completion_tokens"]) == (150, 42)
    assert report["unattached_usage_entries"] == 1
    assert report["totals"]["total_tokens"] == 378 + 150 + 42
    assert snapshot(db.parent) == before
    text = cli("--home", fixture_home, "usage", "--store", db).stderr  # piped: the summary is not the table's
    assert text.splitlines()[-1] == ("praisonmem: 4 sessions, 2 without usage (nothing recorded); 1 Upsonic usage "
                                     "entry of no session's run not counted")


def test_the_same_on_postgres_storage(cli, pg, fixture_home, tmp_path):
    import psycopg

    from tests.compat.test_upsonic_pg_compat import UPSONIC_ENV
    from tests.pgcluster import require_psycopg
    from tests.upsonicpg import load

    require_psycopg()
    load(pg)
    with psycopg.connect(pg.rw_url) as conn:
        conn.execute("UPDATE public.upsonic_sessions SET usage = NULL WHERE session_id = 'session_001'")
    code = LEDGER.replace("from upsonic.storage.sqlite import SqliteStorage", "from upsonic.storage.postgres import "
                          "PostgresStorage").replace("SqliteStorage(db_file=sys.argv[1])",
                                                     "PostgresStorage(db_url=sys.argv[1])")
    run_library(code, pg.rw_url.replace("postgresql://", "postgresql+psycopg://", 1), json.dumps(ENTRIES),
                home=tmp_path, **UPSONIC_ENV)
    report = cli("--home", fixture_home, "usage", "--store", pg.ro_url, "--by", "session", "--json").json()
    rows = {r["session"]: r for r in report["rows"]}
    assert (rows["session_001"]["prompt_tokens"], rows["session_001"]["completion_tokens"],
            rows["session_001"]["cost"]) == (320, 58, 0.0005)
    assert rows["session_001"]["sessions_without_usage"] == 0 and report["unattached_usage_entries"] == 1
    assert report["totals"]["total_tokens"] == 378 + 150 + 42
