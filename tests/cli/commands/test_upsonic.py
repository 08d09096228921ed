"""praisonmem upsonic …: commands, read-only guarantees, planted pickles, bad inputs."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import UPSONIC_DB
from tests.helpers import hold_sqlite_lock, normalise_times


def folder_state(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_sessions_lists_every_session_newest_first(cli, db):
    rows = cli("upsonic", "sessions", "--db", db, "--json").json()
    assert [(r["session_id"], r["user_id"], r["message_count"]) for r in rows] == [
        ("session_002", "user_123", 2), ("session_001", "user_123", 6), ("session_004", None, 0),
        ("session_003", "user_456", 2)]
    assert [r["session_id"] for r in cli("upsonic", "sessions", "--db", db, "--type", "team", "--json").json()] == []


SHOWN = """\
Session   session_001
Type      agent
Agent     agent_fin
User      user_123
Created   <time>
Updated   <time>
Summary   User asked about savings rate (18%) and converted 250 USD to EUR.
Metadata  {"channel": "web", "locale": "en-US"}
Usage     {"requests": 3, "input_tokens": 300, "output_tokens": 84, "duration": 2.5, "model_execution_time": 2.2, \
"upsonic_execution_time": 0.2999999999999998}

#0 request · 2025-01-15T09:00:00Z
[system] You are a helpful finance assistant.
[user] What is my current savings rate?

#1 response · gpt-4o · 2025-01-15T09:00:00Z
[assistant] Your savings rate is 18% of net income.

#2 request · 2025-01-15T09:05:00Z
[user] Convert 250 USD to EUR.

#3 response · gpt-4o · 2025-01-15T09:05:00Z
→ tool call fx_convert({"amount": 250, "from": "USD", "to": "EUR"}) [call_0002]

#4 request · 2025-01-15T09:05:00Z
← tool result of fx_convert [call_0002]: 230.12

#5 response · gpt-4o · 2025-01-15T09:05:00Z
[assistant] 250 USD is about 230 EUR at today's rate.

Runs
  run_0001  COMPLETED  prompt: 'What is my current savings rate?'  output: Your savings rate is 18% of net income.
  run_0002  COMPLETED  prompt: 'Convert 250 USD to EUR.'  output: 250 USD is about 230 EUR at today's rate.
"""


def test_show_renders_every_part_of_the_conversation_and_the_runs(cli, db):
    result = cli("upsonic", "show", "session_001", "--db", db, "--runs")
    assert (result.exit_code, normalise_times(result.stdout), result.stderr) == (0, SHOWN, "")


def test_show_json_is_the_decoded_row(cli, db):
    row = cli("upsonic", "show", "session_003", "--db", db, "--json").json()
    assert row["metadata"] == {"channel": "slack", "tags": ["de", "support"]} and row["session_id"] == "session_003"


def test_user_memory_user_id_shows_the_traits(cli, db):
    shown = cli("upsonic", "user-memory", "user_456", "--db", db).stdout
    assert "preferred_language: German\n" in shown
    assert cli("upsonic", "user-memory", "show", "user_456", "--db", db).stdout == shown


def test_user_memory_set_keeps_the_other_traits_and_parses_json_values(cli, db):
    before = cli("upsonic", "user-memory", "user_456", "--db", db, "--json").json()["user_memory"]
    done = cli("upsonic", "user-memory", "set", "user_456", "role=admin", "tags=[\"a\", \"b\"]", "--db", db)
    assert done.stdout.startswith("wrote user memory of 'user_456'\n") and "role: admin\n" in done.stdout
    traits = cli("upsonic", "user-memory", "show", "user_456", "--db", db, "--json").json()["user_memory"]
    assert traits == {**before, "role": "admin", "tags": ["a", "b"]}


def test_user_memory_unset_removes_only_the_keys_named(cli, db):
    before = cli("upsonic", "user-memory", "user_456", "--db", db, "--json").json()["user_memory"]
    key = next(iter(before))
    assert cli("upsonic", "user-memory", "unset", "user_456", key, "--db", db).exit_code == 0
    assert cli("upsonic", "user-memory", "user_456", "--db", db, "--json").json()["user_memory"] == {
        k: v for k, v in before.items() if k != key}


def test_user_memory_replace_writes_the_object_given(cli, db, tmp_path):
    new = tmp_path / "traits.json"
    new.write_text('{"only": "this"}')
    done = cli("upsonic", "user-memory", "replace", "user_456", "--from", new, "--db", db, "--yes")
    assert done.stdout == "wrote user memory of 'user_456'\nonly: this\n"
    assert cli("upsonic", "user-memory", "user_456", "--db", db, "--json").json()["user_memory"] == {"only": "this"}


READ_COMMANDS = [["sessions"], ["sessions", "--json"], ["sessions", "--user", "user_123", "--ndjson"],
                 ["show", "session_001"], ["show", "session_001", "--runs"], ["show", "session_002", "--json"],
                 ["user-memory", "user_123"], ["user-memory", "show", "user_456", "--json"],
                 ["user-memory", "set", "user_123", "x=1", "--dry-run"], ["export", "-o", "-"]]


def test_read_commands_leave_the_database_byte_identical(cli, db):
    before = folder_state(db.parent)
    for args in READ_COMMANDS:
        assert cli("upsonic", *args, "--db", db).exit_code == 0, args
    assert folder_state(db.parent) == before  # no -journal, -wal or -shm left, no change
    assert sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_planted_pickle_is_never_unpickled(cli, db, tmp_path):
    canary = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(canary), "w"))

    blob = base64.b64encode(pickle.dumps(Payload())).decode()
    check = subprocess.run([sys.executable, "-c", "import base64, pickle, sys; pickle.loads(base64.b64decode(sys.argv[1]))",
                            blob], capture_output=True)
    assert check.returncode == 0 and canary.exists(), "the payload must be live for this test to mean anything"
    canary.unlink()

    conn = sqlite3.connect(db)
    runs = json.loads(json.loads(conn.execute("SELECT runs FROM upsonic_sessions WHERE session_id = 'session_001'")
                                 .fetchone()[0]))
    runs["run_0001"]["output"]["task"]["response_format"] = {"__pickled__": blob}
    runs["run_0001"]["output"]["output"] = {"__pickled__": blob}
    conn.execute("UPDATE upsonic_sessions SET runs = ? WHERE session_id = 'session_001'",
                 (json.dumps(json.dumps(runs)),))
    conn.commit()
    conn.close()
    home = tmp_path / "home"
    for args in (["sessions"], ["show", "session_001", "--runs"], ["show", "session_001", "--json"],
                 ["export", "-o", str(tmp_path / "x.json")], ["convert", "session_001", "--to-praisonai",
                                                             "--home", str(home)]):
        result = cli("upsonic", *args, "--db", db)
        assert result.exit_code == 0, (args, result.stderr)
    shown = cli("upsonic", "show", "session_001", "--db", db, "--runs").stdout
    assert "output: ‹pickled value, not loaded›" in shown
    assert not canary.exists()


@pytest.mark.parametrize("setup, args, code, message", [
    ("text", ["sessions"], 4, "not an SQLite database"),
    ("no_tables", ["sessions"], 4, "no table 'upsonic_sessions'"),
    ("other_columns", ["user-memory", "u"], 4, "does not have Upsonic 0.77.3's columns"),
    ("fixture", ["show", "nope"], 3, "no Upsonic session 'nope'"),
    ("fixture", ["user-memory", "nobody"], 3, "no Upsonic user memory for 'nobody'"),
    ("fixture", ["user-memory", "set", "user_123", "novalue"], 2, "trait must be KEY=VALUE, got 'novalue'"),
    ("fixture", ["user-memory", "unset", "user_123", "nokey"], 3, "user 'user_123' has no trait nokey"),
    ("fixture", ["sessions", "--type", "robot"], 2, "'robot' is not one of 'agent', 'team', 'workflow'"),
    ("missing", ["sessions"], 3, "no such database"),
])
def test_bad_inputs(cli, tmp_path, setup, args, code, message):
    path = tmp_path / "x.db"
    if setup == "text":
        path.write_text("not sqlite " * 100)
    elif setup == "no_tables":
        sqlite3.connect(path).execute("CREATE TABLE t (a)").connection.commit()
    elif setup == "other_columns":
        sqlite3.connect(path).execute("CREATE TABLE upsonic_user_memories (user_id, traits)").connection.commit()
    elif setup == "fixture":
        shutil.copy(UPSONIC_DB, path)
    before = path.read_bytes() if path.exists() else None
    result = cli("upsonic", *args, "--db", path)
    assert result.exit_code == code, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert (path.read_bytes() if path.exists() else None) == before


def test_replace_from_a_file_that_is_not_an_object(cli, db, tmp_path):
    bad = tmp_path / "list.json"
    bad.write_text("[1, 2]")
    result = cli("upsonic", "user-memory", "replace", "user_456", "--from", bad, "--db", db)
    assert result.exit_code == 2 and "user memory must be a JSON object, got an array" in result.stderr


def test_db_is_required(cli):
    result = cli("upsonic", "sessions")
    assert result.exit_code == 2 and "--db PATH is required" in result.stderr


def test_a_database_locked_longer_than_the_timeout(cli, db, monkeypatch):

    monkeypatch.setenv("PRAISONMEM_LOCK_TIMEOUT", "0.3")
    holder = hold_sqlite_lock(db, 10)
    before = db.read_bytes()
    try:
        result = cli("upsonic", "user-memory", "set", "user_123", "a=1", "--db", db)
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4 and "database is locked by another writer" in result.stderr
    assert db.read_bytes() == before


def test_export_of_users_only(cli, db, tmp_path):
    out = tmp_path / "export.json"
    result = cli("upsonic", "export", "--db", db, "-o", out, "--users")
    assert (result.exit_code, result.stderr) == (0, f"praisonmem: exported 2 users and 0 sessions to {out}\n")
    payload = json.loads(out.read_text())
    assert "sessions" not in payload and [u["user_id"] for u in payload["users"]] == ["user_456", "user_123"]


def test_import_dry_run_says_what_it_would_insert_and_creates_nothing(cli, db, tmp_path):
    out = tmp_path / "export.json"
    cli("upsonic", "export", "--db", db, "-o", out, "--users")
    target = tmp_path / "new.db"
    dry = cli("upsonic", "import", out, "--db", target, "--dry-run")
    assert dry.stdout == "would insert user user_456\nwould insert user user_123\n"
    assert not target.exists()


def test_import_into_a_new_file_writes_the_rows(cli, db, tmp_path):
    out = tmp_path / "export.json"
    cli("upsonic", "export", "--db", db, "-o", out, "--users")
    target = tmp_path / "new.db"
    done = cli("upsonic", "import", out, "--db", target)
    assert done.stdout == "inserted user user_456\ninserted user user_123\n"
    assert cli("upsonic", "user-memory", "user_123", "--db", target, "--json").json()["agent_id"] == "agent_fin"


def test_convert_to_praisonai_writes_session_files(cli, db, tmp_path):
    wrote = cli("upsonic", "convert", "session_001", "session_003", "--to-praisonai", "--db", db,
                "--home", tmp_path / "h")
    files = tmp_path / "h" / "sessions"
    assert wrote.stdout == (f"wrote session_001 → {files / 'session_001.json'}\n"
                            f"wrote session_003 → {files / 'session_003.json'}\n")
    doc = json.loads((files / "session_003.json").read_text())
    assert doc["messages"][0]["content"] == "Hallo! Kannst du Deutsch?"
    assert doc["metadata"]["upsonic"]["summary"] == "German-speaking user greeted the support agent."


def test_convert_to_praisonai_refuses_an_existing_file_without_replace(cli, db, tmp_path):
    cli("upsonic", "convert", "session_001", "--to-praisonai", "--db", db, "--home", tmp_path / "h")
    again = cli("upsonic", "convert", "session_001", "--to-praisonai", "--db", db, "--home", tmp_path / "h")
    assert again.exit_code == 4 and "--replace" in again.stderr


def test_convert_from_praisonai_inserts_a_row_the_show_command_renders(cli, db, fixture_home):
    back = cli("--home", fixture_home, "upsonic", "convert", "history_ec9d38c8", "--from-praisonai", "--db", db)
    assert (back.exit_code, back.stdout) == (0, "inserted history_ec9d38c8\n")
    assert cli("upsonic", "show", "history_ec9d38c8", "--db", db).stdout.count("→ tool call weather") == 1


def test_convert_needs_exactly_one_direction(cli, db):
    both = cli("upsonic", "convert", "x", "--db", db)
    assert both.exit_code == 2 and "exactly one of --to-praisonai and --from-praisonai" in both.stderr
