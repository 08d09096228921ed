"""Mutating commands against the real library: concurrent writers, and round trips it loads."""

from __future__ import annotations

import json
import time

from tests.compat.conftest import last_json, run_library, start_library
from tests.helpers import make_fixture_repo

APPEND_500 = """
    import sys, time
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir
    store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    for i in range(500):
        assert store.add_message("live", "user" if i % 2 == 0 else "assistant", f"m-{i}"), i
        if i == 0:
            print("start", flush=True)  # only now does "live" exist for praisonmem to find
        time.sleep(0.003)
    print("done", flush=True)
"""

LOAD_EVERYTHING = """
    import json, os
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir
    sdir = str(get_sessions_dir())
    store = DefaultSessionStore(session_dir=sdir)
    loaded = {}
    for row in store.list_sessions(limit=10000):
        session = store.get_session(row["session_id"])
        loaded[row["session_id"]] = {
            "contents": [m.content for m in session.archived_messages + session.messages],
            "title": session.metadata.get("title")}
    quarantined = [n for n in os.listdir(sdir) if ".corrupt-" in n]
    print(json.dumps({"sessions": loaded, "quarantined": quarantined}))
"""


def test_library_appends_500_messages_while_praisonmem_changes_the_directory(cli, fixture_home):
    sessions = fixture_home / "sessions"
    writer = start_library(APPEND_500, home=fixture_home)
    assert writer.stdout.readline().strip() == "start"
    failures = []

    def run(*args: str) -> None:
        result = cli("--home", fixture_home, "session", *args)
        if result.exit_code != 0:
            failures.append((args, result.exit_code, result.stderr))

    for i in range(50):
        run("rename", "live", "--title", f"title-{i}")
        if i == 10:
            run("rename", "my_chat", "my-chat-renamed")
        if i == 20:
            run("adopt", "Legacy Bot")
        if i == 30:
            run("delete", "café-日本", "--yes")
        if i == 40:
            run("adopt", "Old Bot", "--copy")
        time.sleep(0.01)
    out, err = writer.communicate(timeout=120)
    assert out.strip() == "done", err
    assert failures == []

    for path in sessions.glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))  # every file parses
    state = last_json(run_library(LOAD_EVERYTHING, home=fixture_home))
    assert state["quarantined"] == ["broken.json.corrupt-1796050189520"]
    live = state["sessions"]["live"]
    assert [c for c in live["contents"] if c.startswith("m-")] == [f"m-{i}" for i in range(500)]
    assert live["title"] == "title-49"
    assert "my-chat-renamed" in state["sessions"] and "my_chat" not in state["sessions"]
    assert "café-日本" not in state["sessions"]
    assert "history_8fe938c0" not in state["sessions"] and "history_ccc5e5d4" in state["sessions"]
    assert len(state["sessions"]) == len(list(sessions.glob("*.json")))


def test_praisonmem_title_waits_for_the_librarys_lock(cli, fixture_home):
    holder = start_library("""
        import sys, time
        from praisonaiagents.session.store import FileLock
        with FileLock(sys.argv[1]):
            print("locked", flush=True)
            time.sleep(1.5)
    """, str(fixture_home / "sessions" / "my_chat.json"), home=fixture_home)
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "after the wait")
    waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert result.exit_code == 0 and waited >= 1.0
    doc = json.loads((fixture_home / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    assert doc["metadata"]["title"] == "after the wait"


RESUME = """
    import json
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    agent = Agent(name="Legacy Bot", instructions="x", llm="gpt-4o-mini",
                  memory=MemoryConfig(history=True, user_id="erin"))
    agent._init_session_store()  # what the first chat does: open the store, restore history
    print(json.dumps({"session_id": agent._session_id, "history": agent.chat_history}))
"""


def test_an_agent_in_the_adopted_workspace_resumes_the_adopted_history(cli, fixture_home, tmp_path, monkeypatch):
    workspace = make_fixture_repo(tmp_path / "project")
    legacy = json.loads((fixture_home / "sessions" / "history_8fe938c0.json").read_text(encoding="utf-8"))
    before = last_json(run_library(RESUME, home=fixture_home, cwd=workspace))
    assert before["history"] == []  # workspace scope: the legacy file is not adopted by the library

    monkeypatch.chdir(workspace)
    adopted = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--json")
    assert adopted.exit_code == 0, adopted.stderr
    change = adopted.json()[0]
    after = last_json(run_library(RESUME, home=fixture_home, cwd=workspace))
    assert after["session_id"] == change["new_session_id"]
    assert [m["content"] for m in after["history"]] == [m["content"] for m in legacy["messages"]]


def test_rename_delete_and_import_round_trip_through_the_library(cli, fixture_home, tmp_path):
    exported = tmp_path / "export.json"
    assert cli("--home", fixture_home, "session", "export", "--all", "-o", exported).exit_code == 0
    assert cli("--home", fixture_home, "session", "rename", "support/ticket #1234", "ticket/closed").exit_code == 0
    assert cli("--home", fixture_home, "session", "delete", "interrupted-stream", "--yes").exit_code == 0
    fresh = tmp_path / "fresh-home"
    assert cli("--home", fresh, "session", "import", exported).exit_code == 0

    check = """
        import json
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonaiagents.paths import get_sessions_dir
        store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
        ids = ("ticket/closed", "support/ticket #1234", "interrupted-stream", "compacted-demo")
        print(json.dumps({i: [store.session_exists(i), store.get_chat_history(i)] for i in ids}))
    """
    renamed = last_json(run_library(check, home=fixture_home))
    assert renamed["ticket/closed"][0] is True
    assert renamed["ticket/closed"][1][0]["content"] == "My order #1234 has not arrived"
    assert renamed["support/ticket #1234"][0] is False
    assert renamed["interrupted-stream"][0] is False
    imported = last_json(run_library(check, home=fresh))
    assert imported["support/ticket #1234"][0] is True and imported["interrupted-stream"][0] is True
    assert imported["compacted-demo"][1] == renamed["compacted-demo"][1]


def test_praisonmem_imports_the_librarys_own_export_all(cli, fixture_home, tmp_path):
    payload = tmp_path / "library-export.json"
    run_library("""
        import json, sys
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonaiagents.paths import get_sessions_dir
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            json.dump(DefaultSessionStore(session_dir=str(get_sessions_dir())).export_all(), f)
    """, str(payload), home=fixture_home)
    fresh = tmp_path / "fresh"
    result = cli("--home", fresh, "session", "import", payload, "--json")
    assert result.exit_code == 0 and len(result.json()) == 12
    for original in (fixture_home / "sessions").glob("*.json"):
        assert (fresh / "sessions" / original.name).read_bytes() == original.read_bytes(), original.name
