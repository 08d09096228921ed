"""``learn`` on the library's sqlite backend: praisonaiagents 1.7.17 writes ``learn.db`` and reads back what praisonmem
wrote (``LearnConfig(backend="sqlite")``, the stores' own ``add``), each a separate process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compat.conftest import last_json, run_library
from tests.helpers import hold_sqlite_lock, refused, snapshot

WRITE = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
db_url, user, items = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = LearnConfig(backend="sqlite", db_url=db_url or None, persona=True, insights=True, thread=True,
                     patterns=True, decisions=True, feedback=True, improvements=True)
manager = LearnManager(config, user_id=user)
ids = [manager._stores[store].add(text, meta).id for store, text, meta in items]
for store in manager._stores.values():
    assert store._backend is not None, "fell back to files"
    store._backend.close()
print(json.dumps(ids))
"""

READ = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
config = LearnConfig(backend="sqlite", db_url=sys.argv[1] or None, persona=True, insights=True, thread=True,
                     patterns=True, decisions=True, feedback=True, improvements=True)
manager = LearnManager(config, user_id=sys.argv[2])
out = {name: {k: v.to_dict() for k, v in store._entries.items()} for name, store in manager._stores.items()}
for store in manager._stores.values():
    store._backend.close()
print(json.dumps(out))
"""


def library_add(home: Path, db: Path | str, *items: tuple[str, str, dict | None], user: str = "alice") -> list[str]:
    return last_json(run_library(WRITE, str(db), user, json.dumps(items), home=home, cwd=Path.cwd()))


def library_read(home: Path, db: Path | str, user: str = "bob") -> dict[str, dict]:
    """Every store as the library loads it, for another user than the writer's: the rows carry no user."""
    found = last_json(run_library(READ, str(db), user, home=home, cwd=Path.cwd()))
    return {name: data for name, data in found.items() if data}


def rows(db: Path) -> dict[str, tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {k: (d, c, u) for k, d, c, u in conn.execute("SELECT key, data, created_at, updated_at FROM learn_store")}
    finally:
        conn.close()  # an open reader of a WAL database keeps its -shm and -wal there


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def learned(home, tmp_path) -> tuple[Path, dict[str, dict]]:
    """A learn.db the library wrote (a persona entry and an insight), and what the library reads in it."""
    db = tmp_path / "agent" / "learn.db"
    library_add(home, db, ("persona", "Prefers tea", {"category": "drinks"}), ("insights", "Asks about travel", None))
    return db, library_read(home, db)


def learn(cli, home: Path, *args: object):
    return cli("--home", home, "learn", *args)


def expected_rows(db: Path, stores: dict[str, dict]) -> list[dict]:
    return [{"backend": "sqlite", "scope": None, "user_id": None, "store": name, "file": str(db), "key": name, **e}
            for name in sorted(stores) for e in stores[name].values()]


def test_list_shows_the_library_rows_exactly_and_changes_no_byte(cli, home, learned):
    db, stores = learned
    before = snapshot(db.parent)
    result = learn(cli, home, "list", "--db", db, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json() == expected_rows(db, stores)
    [persona] = stores["persona"].values()
    table = learn(cli, home, "list", "--db", f"sqlite:///{db}", "--store", "persona").stdout.splitlines()
    assert table[0] == "STORE\tSCOPE\tUSER\tID\tUPDATED\tUSES\tCONTENT"
    assert table[1].split("\t")[:4] + table[1].split("\t")[5:] == ["persona", "-", "-", persona["id"], "0",
                                                                   "Prefers tea"]
    shown = learn(cli, home, "show", persona["id"], "--db", db, "--json")
    assert shown.json() == expected_rows(db, {"persona": stores["persona"]})[0]
    assert snapshot(db.parent) == before  # no byte, mtime, -wal, -shm or -journal: and no use_count bumped
    assert library_read(home, db) == stores


def test_the_library_default_place_is_found_without_options(cli, home, tmp_path, monkeypatch):
    """No db_url: the library writes <cwd>/learn/learn.db; with store_path = the home's learn dir, <home>/learn."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    library_add(home, "", ("patterns", "Check the weather", None))
    assert (work / "learn" / "learn.db").is_file()
    found = learn(cli, home, "list", "--json").json()
    assert [(r["backend"], r["file"], r["content"]) for r in found] == [
        ("sqlite", str(work / "learn" / "learn.db"), "Check the weather")]
    assert learn(cli, home, "list", "--backend", "sqlite", "--json").json() == found
    assert learn(cli, home, "list", "--backend", "file", "--json").json() == []
    # a learn.db of another program at that place is not a learn store: left out, not an error
    other = home / "learn" / "learn.db"
    other.parent.mkdir(exist_ok=True)
    _crafted(other.parent, "CREATE TABLE notes (x)")
    assert learn(cli, home, "list", "--json").json() == found


def test_add_writes_the_library_row_and_the_library_reads_exactly_that(cli, home, learned):
    db, stores = learned
    row_before = rows(db)
    added = learn(cli, home, "add", "persona", "Likes cats — and café ☕", "--meta", "category=pets", "--db", db,
                  "--json")
    assert added.exit_code == 0, added.stderr
    [change] = added.json()
    new_id = change["id"]
    after = library_read(home, db)
    new = after["persona"].pop(new_id)
    assert after == stores  # nothing else changed
    assert new == {k: change[k] for k in ("id", "content", "metadata", "created_at", "updated_at", "use_count",
                                          "last_used")}
    assert (new["content"], new["metadata"], new["use_count"]) == ("Likes cats — and café ☕", {"category": "pets"}, 0)
    assert new_id.startswith("persona_1_")
    assert (change["backend"], change["file"], change["key"], change["added"]) == ("sqlite", str(db), "persona", True)
    # the row as SQLiteBackend.save writes it: the same JSON text, updated_at SQLite's epoch seconds (a REAL)
    data, created, updated = rows(db)["persona"]
    assert data == json.dumps({**stores["persona"], new_id: new}, default=str, ensure_ascii=False)
    assert created == row_before["persona"][1] and isinstance(updated, float) and updated >= row_before["persona"][2]
    assert rows(db)["insights"] == row_before["insights"]
    # the library's dedup: the same text (any case, trimmed) is not added again
    dup = learn(cli, home, "add", "persona", "  likes CATS — AND CAFÉ ☕ ", "--db", db)
    assert dup.stdout == f"{new_id} (already there; not added again)\n"
    assert library_read(home, db)["persona"][new_id] == new
    # and the library goes on adding after praisonmem's entry
    library_add(home, db, ("persona", "Early riser", None))
    assert len(library_read(home, db)["persona"]) == 3


def test_add_to_a_store_with_no_row_yet_makes_the_row(cli, home, learned):
    db, stores = learned
    [change] = learn(cli, home, "add", "decisions", "Use trains", "--db", db, "--json").json()
    assert library_read(home, db) == {**stores, "decisions": {change["id"]: {
        k: change[k] for k in ("id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used")}}}


def test_delete_removes_exactly_the_entry_and_leaves_no_text_behind(cli, home, learned):
    db, stores = learned
    [persona_id] = stores["persona"]
    library_add(home, db, ("persona", "Secret-ish habit zq7", None))
    stores = library_read(home, db)
    [secret_id] = [k for k, v in stores["persona"].items() if v["content"].endswith("zq7")]
    before = snapshot(db.parent)
    assert learn(cli, home, "delete", secret_id, "--db", db).exit_code == 4  # asks first
    assert snapshot(db.parent) == before
    done = learn(cli, home, "delete", secret_id, "--db", db, "--yes")
    assert done.stdout == f"deleted {secret_id} from {db} (learn_store 'persona')\n", done.stderr
    del stores["persona"][secret_id]
    assert library_read(home, db) == stores
    for path in db.parent.iterdir():
        assert b"zq7" not in path.read_bytes(), path
    gone = learn(cli, home, "delete", secret_id, "--db", db, "--yes")
    assert (gone.exit_code, gone.stderr) == (3, f"praisonmem: error: no learn entry '{secret_id}' in {db}\n")


def test_delete_finds_the_entry_in_the_detected_db_beside_the_files(cli, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    library_add(home, "", ("threads", "Trip to Porto", None))
    [thread_id] = library_read(home, "")["threads"]
    done = learn(cli, home, "delete", thread_id, "--yes")
    assert done.stdout == f"deleted {thread_id} from {tmp_path / 'learn/learn.db'} (learn_store 'threads')\n"
    assert library_read(home, "") == {}


def test_clear_empties_the_row_as_the_library_clear_does(cli, home, learned):
    db, stores = learned
    dry = learn(cli, home, "clear", "persona", "--db", db, "--dry-run")
    assert dry.stdout == f"would remove 1 entries from {db} (learn_store 'persona')\n"
    done = learn(cli, home, "clear", "persona", "--db", db, "--yes", "--json")
    assert done.json() == [{"action": "removed", "store": "persona", "backend": "sqlite", "file": str(db),
                            "key": "persona", "removed": 1, "dry_run": False, "detail": None}]
    assert rows(db)["persona"][0] == "{}"  # the library's clear saves {} (the row stays)
    assert library_read(home, db) == {"insights": stores["insights"]}
    assert b"Prefers tea" not in db.read_bytes()
    # a store with no row: nothing to clear, nothing written
    before = snapshot(db.parent)
    assert learn(cli, home, "clear", "threads", "--db", db, "--yes").stdout == (
        f"removed 0 entries from {db} (learn_store 'threads')\n")
    assert snapshot(db.parent) == before


def test_writes_wait_for_the_write_lock_then_give_up_with_nothing_changed(cli, home, learned):
    db, _ = learned
    holder = hold_sqlite_lock(db, 5)
    try:
        before = rows(db)
        result = cli("--home", home, "--lock-timeout", "0.3", "learn", "add", "persona", "x", "--db", db)
        assert result.exit_code == 4 and result.stdout == "", result.stderr
        assert "locked by another writer" in result.stderr and result.stderr.count("\n") == 1
    finally:
        holder.kill()
        holder.wait()
    assert rows(db) == before


WRITER = """
import json, sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
data = json.loads(conn.execute("SELECT data FROM learn_store WHERE key = 'persona'").fetchone()[0])
data["persona_9_1"] = {"id": "persona_9_1", "content": "Written meanwhile", "metadata": {}}
conn.execute("UPDATE learn_store SET data = ? WHERE key = 'persona'", (json.dumps(data),))
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def test_a_write_waits_for_a_writer_in_progress_and_keeps_its_change(cli, home, learned):
    """BEGIN IMMEDIATE: the row is re-read once the other writer committed, so its entry is kept (a deferred
    transaction would have read the row before and failed, or lost it)."""
    db, stores = learned
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db), "1.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "locked"
        result = cli("--home", home, "--lock-timeout", "20", "learn", "add", "persona", "Mine", "--db", db)
        assert result.exit_code == 0, result.stderr
    finally:
        writer.wait(timeout=30)
    assert sorted(e["content"] for e in library_read(home, db)["persona"].values()) == [
        "Mine", "Prefers tea", "Written meanwhile"]


READER = """
import sys
from praisonaiagents.storage.backends import SQLiteBackend
backend = SQLiteBackend(db_path=sys.argv[1], table_name="learn_store")
backend.load("persona")
print("open", flush=True)
sys.stdin.readline()
backend.close()
"""


def test_a_delete_while_an_agent_has_the_db_open_leaves_the_text_in_no_file(cli, home, learned):
    """The agent's open connection keeps the WAL after praisonmem closes: the write itself checkpoints, so the
    old page with the entry's text is overwritten in the main file and the WAL holds no copy."""
    db, stores = learned
    library_add(home, db, ("persona", "Habit zq7", None))
    [secret_id] = [k for k, v in library_read(home, db)["persona"].items() if v["content"] == "Habit zq7"]
    agent = subprocess.Popen([sys.executable, "-c", READER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert agent.stdout.readline().strip() == "open"
        done = learn(cli, home, "delete", secret_id, "--db", db, "--yes")
        assert done.exit_code == 0, done.stderr
        for path in db.parent.iterdir():
            assert b"zq7" not in path.read_bytes(), path
    finally:
        agent.communicate("\n", timeout=30)
    assert secret_id not in library_read(home, db)["persona"]


def test_files_and_a_db_that_both_hold_stores_make_add_ask_which(cli, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    library_add(home, "", ("persona", "In the db", None))
    assert learn(cli, home, "add", "persona", "In a file", "--backend", "file").exit_code == 0
    db = tmp_path / "learn" / "learn.db"
    message = refused(cli, tmp_path, "--home", home, "learn", "add", "persona", "Where?", code=2)
    assert message == (f"praisonmem: error: both the learn files under {home / 'learn'} and {db} hold learn stores; "
                       "say which with --backend file or --backend sqlite\n")
    # --user-id only files have: the files
    assert learn(cli, home, "add", "persona", "Mine", "--user-id", "alice").exit_code == 0
    assert (home / "learn/private/alice/persona.json").is_file()
    assert [r["content"] for r in learn(cli, home, "list", "--json").json()] == ["Mine", "In a file", "In the db"]


# ---------------------------------------------------------------- bad input


def _crafted(where: Path, *sql: str) -> Path:
    db = where / "learn.db" if where.name == "learn" else where / "crafted" / "learn.db"
    db.parent.mkdir(exist_ok=True)
    conn = sqlite3.connect(db)
    with conn:
        for statement in sql:
            conn.execute(statement)
    conn.close()
    return db


TABLE = ("CREATE TABLE learn_store (key TEXT PRIMARY KEY, data TEXT NOT NULL, "
         "created_at REAL DEFAULT (strftime('%s', 'now')), updated_at REAL DEFAULT (strftime('%s', 'now')))")
ROW = """INSERT INTO learn_store (key, data) VALUES ('persona', '{"p_0_1": {"id": "p_0_1", "content": "c"}}')"""


@pytest.mark.parametrize("sql, why", [
    (("CREATE TABLE sessions (id TEXT)",), "no 'learn_store' table"),
    (("CREATE TABLE learn_store (key TEXT PRIMARY KEY, value TEXT)",),
     "the 'learn_store' table lacks the store's columns (data, created_at, updated_at)"),
    (("CREATE TABLE real_rows (key TEXT, data TEXT, created_at REAL, updated_at REAL)",
      "CREATE VIEW learn_store AS SELECT * FROM real_rows"),
     "'learn_store' is a view, not a table: it would answer every read with its own query"),
    ((TABLE, ROW, "CREATE TABLE copied (data TEXT)",
      "CREATE TRIGGER keep AFTER UPDATE ON learn_store BEGIN INSERT INTO copied VALUES (old.data); END"),
     "a trigger ('keep') on the table 'learn_store', which would run its own SQL inside every change"),
])
@pytest.mark.parametrize("command", [("list",), ("show", "p_0_1"), ("add", "persona", "x"), ("delete", "p_0_1", "--yes"),
                                     ("clear", "persona", "--yes")])
def test_a_db_that_is_not_the_library_store_is_refused_in_one_line(cli, home, tmp_path, sql, why, command):
    db = _crafted(tmp_path, *sql)
    message = refused(cli, db.parent, "--home", home, "learn", *command, "--db", db, code=4)
    then = "nothing changed" if command[0] == "add" else "nothing read"  # delete and clear read first
    assert message == f"praisonmem: error: {db}: {why}; not a store as its library writes it, {then}\n"


def test_a_missing_db_is_not_found_and_never_created(cli, home, tmp_path):
    db = tmp_path / "none" / "learn.db"
    for command in (("list",), ("add", "persona", "x"), ("clear", "persona", "--yes")):
        result = learn(cli, home, *command, "--db", db)
        assert (result.exit_code, result.stdout, result.stderr) == (
            3, "", f"praisonmem: error: {db}: no such database\n")
    assert not db.parent.exists()
    result = learn(cli, home, "list", "--backend", "sqlite")
    assert result.exit_code == 3 and "give its path with --db" in result.stderr


def test_a_file_that_is_not_a_database_and_a_row_that_does_not_parse(cli, home, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    assert refused(cli, tmp_path, "--home", home, "learn", "list", "--db", junk, code=4).startswith(
        f"praisonmem: error: {junk}: file is not a database")
    db = _crafted(tmp_path, TABLE, "INSERT INTO learn_store (key, data) VALUES ('persona', '{broken')", ROW.replace(
        "'persona'", "'insights'"))
    listed = learn(cli, home, "list", "--db", db, "--json")
    assert listed.exit_code == 0 and [r["id"] for r in listed.json()] == ["p_0_1"]
    assert listed.stderr.startswith(f"praisonmem: warning: skipped unreadable learn store {db}: the 'persona' row "
                                    "of learn_store: not the JSON the library writes")
    message = refused(cli, db.parent, "--home", home, "learn", "add", "persona", "x", "--db", db, code=4)
    assert message.startswith(f"praisonmem: error: {db}: the 'persona' row of learn_store: not the JSON") or \
        "not overwritten" in message


def test_options_that_do_not_go_together_are_usage_errors(cli, home, learned):
    db, _ = learned
    before = snapshot(db.parent)
    for args, why in [(("--db", db, "--user-id", "alice"), "--user-id does not apply to --backend sqlite"),
                      (("--db", db, "--scope", "shared"), "--scope does not apply to --backend sqlite"),
                      (("--db", db, "--backend", "redis"), "--db does not apply to --backend redis"),
                      (("--db", db, "--url", "redis://x"), "--db is for --backend sqlite"),
                      (("--db", "mysql://h/x"), "--db takes a learn.db path or sqlite:///PATH, not mysql://")]:
        result = learn(cli, home, "list", *args)
        assert result.exit_code == 2 and why in result.stderr and result.stderr.count("\n") == 1, (args, result.stderr)
    assert snapshot(db.parent) == before


def test_check_secrets_scans_the_learn_db_the_library_wrote(cli, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    token = "ghp_" + "Zq7xW2vB9nL4kR8tY1mP6sD3fG5hJ0cVaE2u"
    library_add(home, "", ("persona", f"my github token is {token}", None))
    db = tmp_path / "learn" / "learn.db"
    before = snapshot(db.parent)
    result = cli("--home", home, "check", "--secrets", "--json")
    report = result.json()
    assert result.exit_code == 1 and token not in result.stdout + result.stderr
    [finding] = [f for f in report["findings"] if f["store"] == "learn"]
    [persona_id] = library_read(home, "")["persona"]
    assert (finding["file"], finding["record"]) == (str(db), f"persona/{persona_id}")
    assert report["scanned"]["learn_entries"] == 1
    # a row that does not parse is searched as it is
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO learn_store (key, data) VALUES ('insights', ?)", (f'{{"broken {token}',))
    conn.close()
    before = snapshot(db.parent)
    report = cli("--home", home, "check", "--secrets", "--json").json()
    assert {(f["file"], f["record"]) for f in report["findings"] if f["store"] == "learn"} == {
        (str(db), f"persona/{persona_id}"), (str(db), "insights")}
    assert snapshot(db.parent) == before
