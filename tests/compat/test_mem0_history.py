"""mem0's history.db, written by mem0ai 2.2.1's own ``SQLiteManager`` (add_history, batch_add_history,
save_messages): ``--provider mem0-history`` lists, searches and deletes its events, and after each delete mem0's
``get_history`` reads back exactly the change and nothing else, with the deleted text in no byte of the file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import hold_sqlite_lock, refused, snapshot

OFFLINE = {"MEM0_TELEMETRY": "False", "ANONYMIZED_TELEMETRY": "False", "DO_NOT_TRACK": "1"}
STORAGE = """
    import json, sys
    from mem0.memory.storage import SQLiteManager
    db, plan = sys.argv[1], json.loads(sys.argv[2])
    m = SQLiteManager(db)
    if plan.get("secure_delete_off"):  # as an SQLite built without SQLITE_SECURE_DELETE writes
        m.connection.execute("PRAGMA secure_delete=OFF")
    for h in plan.get("add", []):
        m.add_history(h["memory_id"], h.get("old"), h.get("new"), h["event"], created_at=h.get("created_at"),
                      updated_at=h.get("updated_at"), is_deleted=h.get("is_deleted", 0), actor_id=h.get("actor_id"),
                      role=h.get("role"))
    if plan.get("batch"):
        m.batch_add_history(plan["batch"])
    for scope, messages in plan.get("messages", []):
        m.save_messages(messages, scope)
    print(json.dumps({"history": {mid: m.get_history(mid) for mid in plan.get("read", [])},
                      "messages": {s: m.get_last_messages(s) for s in plan.get("read_scopes", [])}}))
    m.close()
"""
T0, T1, T2, T3 = ("2026-01-01T10:00:00.000001+00:00", "2026-01-02T10:00:00+00:00", "2026-01-03T10:00:00+00:00",
                  "2026-01-04T10:00:00+00:00")
EVENTS = [  # m1: added, updated, deleted (each text once per event); m2 added in a batch; m3 by an agent
    {"memory_id": "m1", "new": "alpha likes green tea", "event": "ADD", "created_at": T0, "role": "user"},
    {"memory_id": "m1", "old": "alpha likes green tea", "new": "bravo likes black tea", "event": "UPDATE",
     "created_at": T0, "updated_at": T1, "role": "user"},
    {"memory_id": "m1", "old": "bravo likes black tea", "event": "DELETE", "created_at": T0, "updated_at": T2,
     "is_deleted": 1, "role": "user"},
    {"memory_id": "m3", "new": "charlie works in Lisbon", "event": "ADD", "created_at": T3, "actor_id": "planner",
     "role": "assistant"},
]
BATCH = [{"memory_id": "m2", "new_memory": "delta owns a café", "event": "ADD", "created_at": T1, "role": "user"}]
MESSAGES = [["user_id=alice", [{"role": "user", "content": "I like green tea"},
                               {"role": "assistant", "content": "Noted", "name": "bot"}]]]
READ = {"read": ["m1", "m2", "m3"], "read_scopes": ["user_id=alice"]}


def mem0(db: Path, **plan) -> dict:
    """Run mem0's own SQLiteManager on ``db`` (this venv, telemetry off): the plan's writes, then its reads."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(STORAGE), str(db), json.dumps(plan)],
                          capture_output=True, text=True, timeout=300, cwd=db.parent,
                          env=dict(os.environ, PYTHONPATH=str(REPO), **OFFLINE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def db(tmp_path) -> tuple[Path, dict]:
    """A history.db mem0 wrote, and what mem0 read from it right after."""
    path = tmp_path / "mem0" / "history.db"
    path.parent.mkdir()
    return path, mem0(path, add=EVENTS, batch=BATCH, messages=MESSAGES, **READ)


def listed(cli, path: Path, *args: str) -> list[dict]:
    result = cli("memory", "list", "--provider", "mem0-history", "--db", path, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return result.json()


def test_list_gives_every_event_as_get_history_returns_it(cli, db):
    path, said = db
    rows = listed(cli, path)
    assert {r["type"] for r in rows} == {"history"}
    events = [r["item"] for r in rows]
    for mid, history in said["history"].items():
        assert [e for e in events if e["memory_id"] == mid] == history
    assert len(events) == 5
    assert [e["memory_id"] for e in events] == ["m1", "m1", "m1", "m2", "m3"]  # by created_at, as get_history
    table = cli("memory", "list", "--provider", "mem0-history", "--db", path)
    assert table.stdout.splitlines()[0].split("\t") == ["EVENT", "ID", "MEMORY-ID", "WHEN", "ACTOR", "ROLE", "OLD",
                                                        "NEW"]
    assert table.stdout.splitlines()[5].split("\t")[4:] == ["planner", "assistant", "", "charlie works in Lisbon"]


def test_the_default_database_is_mem0s(cli, db, monkeypatch):
    path, said = db
    monkeypatch.setenv("MEM0_DIR", str(path.parent))
    assert cli("memory", "list", "--provider", "mem0-history", "--json").json() == listed(cli, path)
    monkeypatch.delenv("MEM0_DIR")
    home = Path(os.environ["HOME"]) / ".mem0"
    assert refused(cli, Path(os.environ["HOME"]), "memory", "list", "--provider", "mem0-history", code=3) == \
        f"praisonmem: error: {home / 'history.db'}: no such database\n"
    home.mkdir(exist_ok=True)  # mem0 itself made it, for its config.json
    (home / "history.db").write_bytes(path.read_bytes())
    assert cli("memory", "list", "--provider", "mem0-history", "--json").json() == listed(cli, path)


def test_filters_and_search_over_old_and_new_text(cli, db):
    path, _ = db
    assert [r["item"]["event"] for r in listed(cli, path, "--filter", "memory_id=m1")] == ["ADD", "UPDATE", "DELETE"]
    [deleted] = listed(cli, path, "--filter", "event=DELETE")
    assert (deleted["item"]["old_memory"], deleted["item"]["is_deleted"]) == ("bravo likes black tea", True)
    assert [r["item"]["memory_id"] for r in listed(cli, path, "--filter", "actor_id=planner")] == ["m3"]
    assert [r["item"]["memory_id"] for r in listed(cli, path, "--filter", "is_deleted=true")] == ["m1"]
    hits = cli("memory", "search", "black tea", "--provider", "mem0-history", "--db", path, "--json").json()
    assert [(h["item"]["event"], h["score"]) for h in hits] == [("UPDATE", 1.0), ("DELETE", 1.0), ("ADD", 0.4)]
    assert cli("memory", "search", "café", "--provider", "mem0-history", "--db", path, "--filter", "event=ADD",
               "--json").json()[0]["item"]["memory_id"] == "m2"
    root = path.parent
    assert refused(cli, root, "memory", "list", "--provider", "mem0-history", "--db", path, "--filter", "user_id=a",
                   code=2).startswith("praisonmem: error: --filter user_id: mem0's history has no such column")
    assert "records no user" in refused(cli, root, "memory", "list", "--provider", "mem0-history", "--db", path,
                                        "--user-id", "alice", code=2)
    assert refused(cli, root, "memory", "list", "--db", path, code=2) == \
        "praisonmem: error: --db applies to --provider mem0-history only\n"
    assert "--type does not apply" in refused(cli, root, "memory", "list", "--provider", "mem0-history", "--db", path,
                                              "--type", "short", code=4)


def text_in_files(directory: Path, *texts: str) -> list[str]:
    return sorted(f"{p.name}:{t}" for p in directory.iterdir() if p.is_file() for t in texts
                  if t.encode() in p.read_bytes())


def test_delete_one_event_and_mem0_reads_back_the_rest(cli, db):
    path, said = db
    update = said["history"]["m1"][1]
    dry = cli("memory", "delete", update["id"], "--provider", "mem0-history", "--db", path, "--dry-run")
    assert dry.exit_code == 0 and mem0(path, **READ) == said
    result = cli("memory", "delete", update["id"], "--provider", "mem0-history", "--db", path, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    [change] = result.json()
    assert (change["action"], change["id"], change["events"]) == ("deleted", update["id"], [update])
    after = mem0(path, **READ)
    assert after["history"] == {**said["history"], "m1": [said["history"]["m1"][0], said["history"]["m1"][2]]}
    assert after["messages"] == said["messages"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["history.db"]  # no journal, no copy left beside it
    assert refused(cli, path.parent, "memory", "delete", update["id"], "--provider", "mem0-history", "--db", path,
                   "--yes", code=3).startswith(f"praisonmem: error: no memory '{update['id']}'")


def test_delete_a_memory_id_removes_all_its_events_and_their_text(cli, db):
    path, said = db
    assert text_in_files(path.parent, "alpha likes", "bravo likes") == ["history.db:alpha likes",
                                                                        "history.db:bravo likes"]
    result = cli("memory", "delete", "m1", "--provider", "mem0-history", "--db", path, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert [e["event"] for e in result.json()[0]["events"]] == ["ADD", "UPDATE", "DELETE"]
    after = mem0(path, **READ)
    assert after["history"] == {**said["history"], "m1": []} and after["messages"] == said["messages"]
    assert text_in_files(path.parent, "alpha likes", "bravo likes") == []


def test_text_mem0_freed_without_zeroing_is_vacuumed_away_by_a_delete(cli, tmp_path):
    path = tmp_path / "history.db"
    evicted = [["user_id=bob", [{"role": "user", "content": f"EVICTED-{i:02d} " + "x" * 6000}]] for i in range(12)]
    said = mem0(path, add=EVENTS, secure_delete_off=True, messages=evicted, read=["m1", "m3"])
    assert text_in_files(tmp_path, "EVICTED-00", "EVICTED-01") == ["history.db:EVICTED-00", "history.db:EVICTED-01"]
    result = cli("memory", "delete", said["history"]["m3"][0]["id"], "--provider", "mem0-history", "--db", path,
                 "--yes")
    assert (result.exit_code, result.stderr) == (0, "")
    assert text_in_files(tmp_path, "EVICTED-00", "EVICTED-01", "charlie works") == []
    kept = mem0(path, read=["m1", "m3"], read_scopes=["user_id=bob"])
    assert kept["history"] == {"m1": said["history"]["m1"], "m3": []}
    assert [m["content"][:10] for m in kept["messages"]["user_id=bob"]] == [f"EVICTED-{i:02d}" for i in range(2, 12)]


def test_store_and_reset_are_refused(cli, db):
    path, _ = db
    assert refused(cli, path.parent, "memory", "store", "x", "--provider", "mem0-history", code=4) == \
        "praisonmem: error: provider 'mem0-history' does not support short-term storage; nothing changed\n"
    assert refused(cli, path.parent, "memory", "reset", "--all", "--provider", "mem0-history", "--yes",
                   code=4).startswith("praisonmem: error: provider 'mem0-history' does not support resetting")


def other_schema(path: Path) -> None:
    sqlite3.connect(path).executescript("CREATE TABLE notes (id TEXT, body TEXT); INSERT INTO notes VALUES ('1', 'x');")


def a_view(path: Path) -> None:
    sqlite3.connect(path).executescript("CREATE TABLE t (id TEXT); CREATE VIEW history AS SELECT * FROM t;")


def a_trigger(path: Path) -> None:
    mem0(path, add=EVENTS[:1])
    sqlite3.connect(path).executescript("CREATE TABLE copies (t TEXT); CREATE TRIGGER keep BEFORE DELETE ON history "
                                        "BEGIN INSERT INTO copies VALUES (old.new_memory); END;")


def lacking_columns(path: Path) -> None:
    sqlite3.connect(path).executescript("CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, event TEXT);")


def not_a_database(path: Path) -> None:
    path.write_bytes(b"this is not SQLite at all, just text " * 40)


@pytest.mark.parametrize("make, code, says", [
    (other_schema, 4, "no 'history' table; not a store as its library writes it"),
    (a_view, 4, "'history' is a view, not a table"),
    (a_trigger, 4, "a trigger ('keep') on the table 'history'"),
    (lacking_columns, 4, "the 'history' table lacks the store's columns (old_memory, new_memory, created_at"),
    (not_a_database, 4, "file is not a database"),
    (None, 3, "no such database"),
])
def test_a_database_that_is_not_mem0s_is_refused_in_one_line_and_left_alone(cli, tmp_path, make, code, says):
    path = tmp_path / "history.db"
    if make is not None:
        make(path)
    for args in (["list"], ["search", "tea"], ["delete", "m1", "--yes"], ["delete", "m1", "--dry-run"]):
        line = refused(cli, tmp_path, "memory", *args, "--provider", "mem0-history", "--db", path, code=code)
        assert line.startswith(f"praisonmem: error: {path}: ") and says in line, line


def test_a_writer_holding_the_database_makes_delete_wait_then_give_up(cli, db):
    path, said = db
    holder = hold_sqlite_lock(path, 30)
    try:
        line = refused(cli, path.parent, "--lock-timeout", "0.3", "memory", "delete", "m1", "--provider",
                       "mem0-history", "--db", path, "--yes", code=4)
    finally:
        holder.kill()
        holder.wait()
    assert line == f"praisonmem: error: {path}: database is locked by another writer (waited 0.3s); nothing changed\n"
    assert mem0(path, **READ) == said


def test_reads_change_no_byte(cli, db):
    path, _ = db
    before = snapshot(path.parent)
    listed(cli, path)
    cli("memory", "search", "tea", "--provider", "mem0-history", "--db", path)
    cli("memory", "delete", "m1", "--provider", "mem0-history", "--db", path, "--dry-run")
    assert snapshot(path.parent) == before


def test_check_secrets_scans_history_and_messages(cli, tmp_path, monkeypatch):
    path = tmp_path / "history.db"
    mem0(path, add=[{"memory_id": "k1", "old": "token sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "event": "DELETE",
                     "is_deleted": 1}],
         messages=[["user_id=alice", [{"role": "user", "content": "aws AKIAABCDEFGHIJKLMNOP"}]]])
    monkeypatch.setenv("MEM0_DIR", str(tmp_path))
    before = snapshot(tmp_path)
    result = cli("check", "--secrets", "--json")
    assert result.exit_code == 1 and snapshot(tmp_path) == before
    found = sorted((f["store"], f["record"].split("/")[0], f["field"], f["kind"]) for f in result.json()["findings"])
    assert found == [("mem0", "history", "old_memory", "openai_api_key"),
                     ("mem0", "messages", "content", "aws_access_key_id")]
    cli("memory", "delete", "k1", "--provider", "mem0-history", "--yes")
    again = cli("check", "--secrets", "--json").json()
    assert [(f["record"].split("/")[0], f["kind"]) for f in again["findings"]] == [("messages", "aws_access_key_id")]


MEMORY = """
    import json, os, sys
    from tests.compat import fakellm
    fakellm.forbid_network()
    fakellm.start()
    from mem0 import Memory
    here = os.getcwd()
    url = os.environ["OPENAI_BASE_URL"]
    m = Memory.from_config({
        "vector_store": {"provider": "chroma", "config": {"collection_name": "pmtest", "path": here + "/chroma"}},
        "embedder": {"provider": "openai", "config": {"model": "text-embedding-3-small", "embedding_dims": 64,
                                                       "openai_base_url": url}},
        "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "openai_base_url": url}},
        "history_db_path": here + "/history.db",
    })
    if sys.argv[1] == "write":
        ids = []
        for text in ("I like green tea", "I live in Lisbon"):
            ids.append(m.add([{"role": "user", "content": text}], user_id="alice", infer=False)["results"][0]["id"])
        m.update(ids[0], "I like black tea")
        m.delete(ids[0])
    else:
        ids = json.loads(sys.argv[2])
    print(json.dumps({"ids": ids, "history": {i: m.history(i) for i in ids}, "outside": fakellm.OUTSIDE}))
"""


def test_mem0s_own_memory_writes_the_history_praisonmem_reads_and_forgets(cli, tmp_path):
    def run(*args: str) -> dict:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(MEMORY), *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True",
                                       **OFFLINE))
        assert proc.returncode == 0, proc.stderr[-3000:]
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got["outside"] == []
        return got

    said = run("write")
    forgotten, kept = said["ids"]
    path = tmp_path / "history.db"
    events = [r["item"] for r in listed(cli, path)]
    assert [e for e in events if e["memory_id"] == forgotten] == said["history"][forgotten]
    assert [e for e in events if e["memory_id"] == kept] == said["history"][kept]
    assert [e["event"] for e in said["history"][forgotten]] == ["ADD", "UPDATE", "DELETE"]
    result = cli("memory", "delete", forgotten, "--provider", "mem0-history", "--db", path, "--yes")
    assert result.exit_code == 0, result.stderr
    after = run("read", json.dumps(said["ids"]))
    assert after["history"] == {forgotten: [], kept: said["history"][kept]}
    assert text_in_files(tmp_path, "green tea", "black tea") == []
