"""sessions.db against the real SqliteTranscriptStore: a running writer and praisonmem interleave without loss,
the library loads what praisonmem wrote, and praisonmem writes what the library itself would."""

from __future__ import annotations

import json
import shutil
import sqlite3

from tests.compat.conftest import last_json, run_library, start_library
from tests.realhomes import copy_gateway_home

ADD_TURNS = """
    import sys, time
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.paths import get_sessions_dir
    store = SqliteTranscriptStore(session_dir=str(get_sessions_dir()))
    failed = []
    for i in range(int(sys.argv[1])):
        if not store.add_message("live-1", "user" if i % 2 == 0 else "assistant", f"turn-{i}"):
            failed.append(i)
        if i == 0:
            print("start", flush=True)
        time.sleep(0.01)
    print("done", failed, flush=True)
"""

LOAD = """
    import json, sys
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.paths import get_sessions_dir
    store = SqliteTranscriptStore(session_dir=str(get_sessions_dir()))
    out = {}
    for row in store.list_sessions(limit=1000):
        s = store.get_session(row["session_id"])
        out[row["session_id"]] = {"title": s.metadata.get("title"), "contents": [m.content for m in s.messages],
                                  "gateway_session_id": s.gateway_session_id, "agent_id": s.agent_id}
    by_gateway = store.get_by_gateway_session("gw-1")
    out["_by_gateway"] = by_gateway.session_id if by_gateway else None
    print(json.dumps(out))
"""


def test_a_running_library_writer_and_praisonmem_interleave_without_loss(cli, gateway_home):
    turns = 90  # below the library's window of 100, so every turn stays in messages
    writer = start_library(ADD_TURNS, str(turns), home=gateway_home.home)
    assert writer.stdout.readline().strip() == "start"
    failures = []

    def run(*args: str) -> None:
        result = cli("--home", gateway_home.home, "session", *args)
        if result.exit_code != 0:
            failures.append((args, result.exit_code, result.stderr))

    for i in range(30):
        run("rename", "live-1", "--title", f"live title {i}")  # the very session the library is appending to
        run("rename", "agent-chat-1", "--title", f"billing {i}")
        if i == 5:
            run("rename", "gw-legacy", "gw-legacy-renamed", "--store", "sessions.db", "--force")
        if i == 10:
            run("delete", "gw-1", "--yes", "--force")
        if i == 15:
            run("delete", "enc-db-1", "--yes", "--force")
    assert writer.poll() is None  # the library was still writing when praisonmem was done
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert out.strip().splitlines()[-1] == "done []"  # every library write got its lock in time
    assert failures == []
    loaded = last_json(run_library(LOAD, home=gateway_home.home))
    assert loaded["live-1"]["contents"] == [f"turn-{i}" for i in range(turns)]  # no turn lost
    assert loaded["live-1"]["title"].startswith("live title ")
    assert loaded["agent-chat-1"]["title"] == "billing 29"
    assert "gw-legacy-renamed" in loaded and "gw-legacy" not in loaded and "gw-1" not in loaded
    assert "enc-db-1" not in loaded


def test_the_library_loads_a_retitle_and_a_rename_of_a_database_session(cli, gateway_home):
    assert cli("--home", gateway_home.home, "session", "rename", "agent-chat-1", "--title", "Gekündigt ✓").exit_code == 0
    assert cli("--home", gateway_home.home, "session", "rename", "gw-legacy", "gw-legacy-2", "--store",
               "sessions.db", "--force").exit_code == 0
    loaded = last_json(run_library(LOAD, home=gateway_home.home))
    assert loaded["agent-chat-1"]["title"] == "Gekündigt ✓"
    assert (loaded["agent-chat-1"]["gateway_session_id"], loaded["agent-chat-1"]["agent_id"]) == ("gw-1", "billing")
    assert loaded["_by_gateway"] == "agent-chat-1"  # found through the gateway_session_id column
    assert loaded["gw-legacy-2"]["contents"][-1] == "second turn, db only PLANTED-TOKEN-STALE"
    assert "gw-legacy" not in loaded  # the JSON copy stays, but the library reads only the database
    assert (gateway_home.sessions / "gw-legacy.json").is_file()


RENAME_SESSION = """
    import sys
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.paths import get_sessions_dir
    assert SqliteTranscriptStore(session_dir=str(get_sessions_dir())).rename_session(sys.argv[1], sys.argv[2])
"""


def row(db, sid):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT data, agent_name, gateway_session_id, agent_id, updated_at FROM sessions "
                            "WHERE session_id = ?", (sid,)).fetchone()
    finally:
        conn.close()


def test_a_retitle_writes_the_row_the_librarys_own_rename_session_writes(cli, gateway_home, tmp_path):
    theirs = copy_gateway_home(tmp_path / "theirs", project=False)
    for sid, title in (("agent-chat-1", "  Café ✓  "), ("gw-1", "Refunds"), ("enc-db-1", "")):
        assert cli("--home", gateway_home.home, "session", "rename", sid, "--title", title).exit_code == 0
        run_library(RENAME_SESSION, sid, title, home=theirs.home)
        mine, library = row(gateway_home.db, sid), row(theirs.db, sid)
        strip = [json.loads(mine[0]), json.loads(library[0])]
        assert list(strip[0]) == list(strip[1])  # updated_at where the library puts it
        for doc in strip:
            doc.pop("updated_at")
        assert strip[0] == strip[1] and list(strip[0]) == list(strip[1])  # the same document, keys in its order
        assert mine[0] == json.dumps(json.loads(mine[0]), ensure_ascii=False)  # serialised as _write_row does
        assert mine[1:4] == library[1:4] and mine[4] == json.loads(mine[0])["updated_at"]


IMPORT_ALL = """
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.paths import get_sessions_dir
    store = SqliteTranscriptStore(session_dir=str(get_sessions_dir()))
    print(store.session_exists("anything"))  # the first use runs the one-time import into the empty table
"""


def test_plan_db_import_writes_the_rows_the_librarys_own_import_writes(gateway_home, tmp_path):
    from praisonmem.core.paths import resolve
    from praisonmem.core.sessions import plan_db_import

    theirs = copy_gateway_home(tmp_path / "theirs", project=False)
    conn = sqlite3.connect(theirs.db, isolation_level=None)
    conn.execute("DELETE FROM sessions")  # so the library's one-time import runs on its next open
    conn.close()
    run_library(IMPORT_ALL, home=theirs.home)
    assert plan_db_import(resolve(gateway_home.home, env={})).run().exit_code == 0
    for sid in ("bot_slack_7", "enc-1"):
        assert row(gateway_home.db, sid) == row(theirs.db, sid)
    shutil.rmtree(theirs.root)
