"""Databases crafted to pass for a store: a view by a store table's name (a recursive one never ends), a
trigger on one (it runs its own SQL inside praisonmem's writes, here copying a deleted row into ``leak``),
the table missing or with other columns. Every store and every command that opens one refuses it before
anything reads the tables: one stderr line, exit 4, nothing on stdout, nothing changed on disk; a backup of
such a database is not written, and an archive holding one is not restored."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.commands.test_backup_hostile import crafted
from tests.conftest import REPO, UPSONIC_DB
from tests.helpers import snapshot

SESSION = '{"session_id": "s1", "messages": [{"role": "user", "content": "secret text"}]}'
TRANSCRIPT_DDL = ("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, data TEXT NOT NULL, agent_name TEXT, "
                  "gateway_session_id TEXT, agent_id TEXT, updated_at TEXT)")
READ = "nothing read or written"


def view_problem(table: str) -> str:
    return f"'{table}' is a view, not a table: it would answer every read with its own query"


def trigger_problem(table: str) -> str:
    return f"a trigger ('spy') on the table '{table}', which would run its own SQL inside every change"


def columns_of(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def craft(db: Path, kind: str, table: str, key: str) -> None:
    """Turn the store's real ``table`` in ``db`` into what ``kind`` names."""
    conn = sqlite3.connect(db)
    columns = columns_of(conn, table)
    if kind == "view":  # an innocent-looking view over the real rows
        conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_real"')
        conn.execute(f'CREATE VIEW "{table}" AS SELECT * FROM "{table}_real"')
    elif kind == "recursive view":  # rows without end
        conn.execute(f'DROP TABLE "{table}"')
        conn.execute(f'CREATE VIEW "{table}" AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) '
                     "SELECT " + ", ".join(f"'v' || i AS \"{c}\"" for c in columns) + " FROM n")
    elif kind == "trigger":
        conn.execute("CREATE TABLE leak (x)")
        for event in ("DELETE", "UPDATE"):
            conn.execute(f'CREATE TRIGGER {"spy" if event == "DELETE" else "spy_update"} AFTER {event} ON "{table}" '
                         f'BEGIN INSERT INTO leak VALUES (old."{key}"); END')
    elif kind == "wrong columns":
        conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_old"')
        conn.execute(f'CREATE TABLE "{table}" (x TEXT)')
    conn.commit()
    conn.close()


def leaked(db: Path) -> list:
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute("SELECT x FROM leak").fetchall() if "leak" in {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master")} else []
    finally:
        conn.close()


def run(tmp_path: Path, *args: object) -> subprocess.CompletedProcess:
    """praisonmem in its own process, so a query that never ends fails the test (after 60 s) instead of hanging it."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "praisonmem", *map(str, args)], cwd=tmp_path / "work", env=env,
                          capture_output=True, text=True, timeout=60)


@dataclass
class Store:
    """A store's database in a tree: how to build it (real, one row), which table is crafted, what refuses."""

    name: str
    build: Callable[[Path], Path]  # the tree's root -> the database
    table: str
    key: str  # a column the trigger copies out
    commands: list[tuple[tuple[str, ...], str]]  # (arguments, what the refusal ends with), {db}/{root} filled in
    locks: bool = False  # a write takes the session's lock (its .lock sidecar stays, as the library's does) first
    relative: bool = False  # messages name the file as the library does, relative to the project's cwd

    def shown(self, db: Path) -> str:
        return os.path.relpath(db, db.parent.parent) if self.relative else str(db)


def transcript(root: Path) -> Path:
    db = root / "home" / "sessions" / "sessions.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute(TRANSCRIPT_DDL)
    conn.execute("INSERT INTO sessions (session_id, data) VALUES ('s1', ?), ('s2', ?)",
                 (SESSION, SESSION.replace("s1", "s2")))
    conn.commit()
    conn.close()
    return db


def index(root: Path) -> Path:
    """A JSON session and the search index SqliteSessionStore keeps beside it (its own DDL)."""
    sessions = root / "home" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s1.json").write_text(SESSION)
    os.utime(sessions / "s1.json", (1796000000, 1796000000))  # not just written: no agent is on it
    db = sessions / "sessions_index.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE session_fts USING fts5(session_id UNINDEXED, content)")
    conn.execute("CREATE TABLE session_meta (session_id TEXT PRIMARY KEY, updated_at TEXT)")
    conn.execute("CREATE TABLE session_route (session_id TEXT PRIMARY KEY, gateway_session_id TEXT, agent_id TEXT)")
    conn.execute("CREATE TABLE session_index_meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO session_fts VALUES ('s1', 'secret text')")
    conn.execute("INSERT INTO session_meta VALUES ('s1', '2026-11-30T00:00:00')")
    conn.commit()
    conn.close()
    return db


def conversations(root: Path) -> Path:
    from praisonmem.core.sessions.stores.conversation_sql import ConversationSqlite

    db = root / "conv.db"
    conn = sqlite3.connect(db)
    ConversationSqlite(db).create_tables(conn)
    conn.execute("INSERT INTO praison_sessions (session_id, created_at, updated_at) VALUES ('s1', 1.0, 1.0)")
    conn.execute("INSERT INTO praison_messages (id, session_id, role, content, created_at) VALUES "
                 "('m1', 's1', 'user', 'secret text', 1.0)")
    conn.commit()
    conn.close()
    return db


def upsonic(root: Path) -> Path:
    db = root / "upsonic.db"
    shutil.copy(UPSONIC_DB, db)
    return db


def memory(root: Path) -> Path:
    """SqliteMemoryAdapter's short-term file of user alice (the adapter's DDL), in the project's .praisonai/."""
    db = root / "work" / ".praisonai" / "short_term_alice.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE short_term_memory (id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL, "
                 "metadata TEXT, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)")
    conn.execute("""INSERT INTO short_term_memory (content, metadata) VALUES ('secret text', '{"user_id": "alice"}')""")
    conn.commit()
    conn.close()
    return db


HOME = ("--home", "{root}/home", "--memory-dir", "{root}/none")
BACKUP = ((*HOME, "backup", "create", "-o", "{root}/backups"), "backup not written")
STORES = [
    Store("sessions.db", transcript, "sessions", "data", [
        ((*HOME, "session", "show", "s1"), READ),
        ((*HOME, "session", "delete", "s1", "--yes"), READ),
        (("session", "delete", "s2", "--store", "{db}", "--yes"), READ),
        BACKUP]),
    Store("sessions_index.db", index, "session_meta", "session_id", [
        ((*HOME, "session", "delete", "s1", "--yes"), READ),
        BACKUP], locks=True),
    Store("conversations", conversations, "praison_messages", "content", [
        (("session", "list", "--store", "{db}"), READ),
        (("session", "show", "s1", "--store", "{db}"), READ),
        (("session", "delete", "s1", "--store", "{db}", "--yes"), READ)]),
    Store("upsonic", upsonic, "upsonic_sessions", "session_id", [
        (("upsonic", "sessions", "--db", "{db}"), "refusing to touch it"),
        (("upsonic", "show", "session_001", "--db", "{db}"), "refusing to touch it")]),
    Store("memory", memory, "short_term_memory", "content", [
        (("memory", "list", "--provider", "sqlite", "--user-id", "alice"), READ),
        (("memory", "delete", "1", "--provider", "sqlite", "--user-id", "alice", "--yes"), READ),
        (("memory", "store", "more", "--provider", "sqlite", "--user-id", "alice"), READ)], relative=True),
]
CASES = [(store, args, end) for store in STORES for args, end in store.commands]
IDS = [f"{s.name}: {' '.join(a for a in args if '{' not in a)}" for s, args, _ in CASES]


def tree(tmp_path: Path, store: Store, kind: str) -> tuple[Path, Path]:
    root = tmp_path / "t"
    (root / "work").mkdir(parents=True)
    (root / "backups").mkdir()
    db = store.build(root)
    craft(db, kind, store.table, store.key)
    return root, db


def fill(args: tuple[str, ...], root: Path, db: Path) -> list[str]:
    return [a.format(root=root, db=db) for a in args]


def unchanged(root: Path, before: dict, store: Store) -> bool:
    """Nothing changed under ``root``; for a store whose writes lock the session first, but for its lock sidecar."""
    if not store.locks:
        return snapshot(root) == before
    files = {k: v for k, v in snapshot(root).items() if not k.endswith(".lock") and v[3] is not None}
    return files == {k: v for k, v in before.items() if v[3] is not None}


def assert_refused(result, root: Path, before: dict, line: str, store: Store) -> None:
    assert (result.returncode, result.stdout) == (4, ""), result.stderr
    assert result.stderr == f"praisonmem: error: {line}\n"
    assert unchanged(root, before, store)


@pytest.mark.parametrize("kind", ["view", "trigger", "recursive view"])
@pytest.mark.parametrize("store, args, end", CASES, ids=IDS)
def test_a_view_or_trigger_on_a_store_table_is_refused_before_anything_reads_it(tmp_path, store, args, end, kind):
    root, db = tree(tmp_path, store, kind)
    before = snapshot(root)
    table = store.table
    problem = trigger_problem(table) if kind == "trigger" else view_problem(table)
    result = run(root, *fill(args, root, db))
    line = f"{store.shown(db)}: {problem}; not a store as its library writes it, {end}"
    if result.stderr.startswith("praisonmem: error: failed "):  # a batch names the item it failed
        line = result.stderr.removeprefix("praisonmem: error: ").split(": ", 1)[0] + ": " + line
    assert_refused(result, root, before, line, store)
    assert leaked(db) == []


@pytest.mark.parametrize("store, args, end", CASES, ids=IDS)
def test_a_store_table_with_other_columns_is_refused(tmp_path, store, args, end):
    root, db = tree(tmp_path, store, "wrong columns")
    before = snapshot(root)
    result = run(root, *fill(args, root, db))
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (4, "", 1), result.stderr
    assert f" {store.shown(db)}: " in result.stderr and unchanged(root, before, store)


def test_session_list_and_check_name_a_recursive_view_and_finish(tmp_path):
    """``session list`` shows a store it cannot read as an UNREADABLE row (the home's other stores still list),
    ``check`` as an error; neither runs the view."""
    root, db = tree(tmp_path, STORES[0], "recursive view")
    (root / "home" / "sessions" / "j1.json").write_text(SESSION.replace("s1", "j1"))
    before = snapshot(root)
    listed = run(root, *fill(HOME, root, db), "session", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["store"]: r for r in json.loads(listed.stdout)}
    refusal = f"{view_problem('sessions')}; not a store as its library writes it, nothing read or written"
    assert (rows["json"]["session_id"], rows["sessions.db"]["unreadable"], rows["sessions.db"]["error"]) == (
        "j1", True, refusal)
    checked = run(root, *fill(HOME, root, db), "check", "--json")
    assert checked.returncode == 1, checked.stderr
    findings = {f["code"]: f for f in json.loads(checked.stdout)["findings"]}
    assert findings["sessions_db.unreadable"]["message"].startswith(refusal)
    assert snapshot(root) == before


# ---------------------------------------------------------------- PostgreSQL: views, triggers and rules


PG_CRAFTS = {
    "view": ("ALTER TABLE {t} RENAME TO {t}_real; CREATE VIEW {t} AS SELECT * FROM {t}_real;",
             "public.{t} is a view, not a table: it would answer every read with its own query"),
    "trigger": ("CREATE TABLE leak (x text); CREATE FUNCTION spy() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN INSERT INTO leak VALUES (OLD.{key}::text); RETURN OLD; END $$; "
                "CREATE TRIGGER spy AFTER DELETE OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION spy();",
                "a trigger ('spy') on the table public.{t}, which would run its own SQL inside every change"),
    "rule": ("CREATE TABLE leak (x text); CREATE RULE spy AS ON DELETE TO {t} DO ALSO INSERT INTO leak "
             "VALUES (OLD.{key}::text);",
             "a rule ('spy') on the table public.{t}, which would rewrite praisonmem's SQL into its own"),
}


def pg_rows(pg, *tables: str) -> list[str]:
    return [pg.psql(f"SELECT coalesce(json_agg(t ORDER BY t::text)::text, '') FROM {t} t") for t in tables]


@pytest.mark.parametrize("kind", list(PG_CRAFTS))
def test_postgres_conversation_tables_with_a_view_trigger_or_rule_are_refused(cli, pg, tmp_path, kind):
    from tests.pgcluster import require_psycopg

    require_psycopg()
    sessions = tmp_path / "src"
    sessions.mkdir()
    (sessions / "s1.json").write_text(SESSION)
    assert cli("session", "migrate", "--from", sessions, "--to", pg.rw_url, "--all").exit_code == 0
    sql, problem = PG_CRAFTS[kind]
    table = "praison_sessions" if kind == "view" else "praison_messages"
    pg.psql(sql.format(t=table, key="content"))
    pg.psql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO pm_ro")
    before = pg_rows(pg, "praison_sessions_real" if kind == "view" else "praison_sessions", "praison_messages"
                     if kind != "view" else "praison_messages")
    for args in (("session", "list", "--store", pg.ro_url), ("session", "show", "s1", "--store", pg.ro_url),
                 ("session", "delete", "s1", "--store", pg.rw_url, "--yes")):
        result = cli(*args)
        assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (4, "", 1), result.stderr
        assert result.stderr.endswith(f"{problem.format(t=table)}; not a store as its library writes it, "
                                      "nothing read or written\n"), result.stderr
    assert pg_rows(pg, "praison_sessions_real" if kind == "view" else "praison_sessions",
                   "praison_messages") == before
    if kind != "view":
        assert pg.psql("SELECT count(*) FROM leak").strip() == "0"


@pytest.mark.parametrize("kind", list(PG_CRAFTS))
def test_postgres_upsonic_tables_with_a_view_trigger_or_rule_are_refused(cli, pg, kind):
    from tests.pgcluster import require_psycopg
    from tests.upsonicpg import load

    require_psycopg()
    load(pg)
    sql, problem = PG_CRAFTS[kind]
    pg.psql(sql.format(t="upsonic_sessions", key="session_id"))
    for args in (("upsonic", "sessions", "--db", pg.rw_url), ("upsonic", "show", "session_001", "--db", pg.rw_url)):
        result = cli(*args)
        assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (4, "", 1), result.stderr
        assert result.stderr.endswith(f"{problem.format(t='upsonic_sessions')}; not a store as its library "
                                      "writes it, refusing to touch it\n"), result.stderr
