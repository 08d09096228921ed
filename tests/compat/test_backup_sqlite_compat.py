"""Backups of sessions.db while the real SqliteTranscriptStore writes: every
snapshot restores to a database that passes quick_check and that the library loads, with every row whole."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.compat.conftest import last_json, run_library, start_library

WRITER = """
    import sys
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    store = SqliteTranscriptStore(session_dir=sys.argv[1])
    store.add_message("live-0", "user", "first")
    print("ready", flush=True)
    for i in range(int(sys.argv[2])):
        store.add_message(f"live-{i % 3}", "user", f"turn {i} " + "x" * 300)
    print("done", flush=True)
"""

LOAD = """
    import json, sys
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    store = SqliteTranscriptStore(session_dir=sys.argv[1])
    listed = sorted(r["session_id"] for r in store.list_sessions(limit=1000))
    print(json.dumps({"listed": listed, "live": {s: [m["content"] for m in store.get_chat_history(s)]
                                                 for s in listed if s.startswith("live-")}}))
"""


def whole(db: Path) -> list[tuple]:
    """quick_check, and every row's document against its columns (what a torn copy would break)."""
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        found = conn.execute("SELECT session_id, data, updated_at FROM sessions").fetchall()
    finally:
        conn.close()
    for sid, data, updated in found:
        doc = json.loads(data)
        assert (doc["session_id"], doc["updated_at"]) == (sid, updated)
    return found


def test_backups_taken_while_the_library_writes_restore_to_databases_it_loads(cli, gateway_home, tmp_path):
    writer = start_library(WRITER, str(gateway_home.sessions), "600", home=gateway_home.home)
    assert writer.stdout.readline().strip() == "ready"
    archives = []
    try:
        while writer.poll() is None or len(archives) < 2:
            result = cli("--home", gateway_home.home, "--memory-dir", tmp_path / "none", "backup", "create",
                         "--include", "sessions", "-o", tmp_path / "backups", "--json")
            assert result.exit_code == 0, result.stderr
            archives.append((writer.poll() is None, Path(result.json()["path"])))
    finally:
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert sum(1 for during, _ in archives if during) >= 2, "no backup was taken while the store was writing"
    seen = []
    for n, (during, archive) in enumerate(archives):
        assert cli("backup", "verify", archive).exit_code == 0
        target = tmp_path / f"restored-{n}"
        assert cli("backup", "restore", archive, "--to", target, "--yes").exit_code == 0
        db = target / "home" / "sessions" / "sessions.db"
        found = whole(db)
        loaded = last_json(run_library(LOAD, str(db.parent), home=target / "home"))
        assert sorted(sid for sid, _, _ in found) == loaded["listed"]
        assert "gw-1" in loaded["listed"] and "live-0" in loaded["listed"]
        seen.append(sum(len(turns) for turns in loaded["live"].values()))
    assert seen[-1] >= max(seen[:-1])  # the last snapshot, after the writer ended, is the newest
