"""Odd and hostile inputs: one line on stderr, the documented exit code, nothing changed on disk."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, PRAISONAI_FIXTURES
from tests.helpers import hold_flock, refused, snapshot


def test_arguments_that_are_not_utf8_are_refused(cli, project):
    bad = b"\xff".decode("utf-8", "surrogateescape")
    before = snapshot(project)
    for args in (["memory", "store", bad], ["episodic", "add", "x", "--user-id", bad],
                 ["workspace", "id", "--agent", bad], ["config", "set", "home", f"/tmp/{bad}"]):
        result = cli(*args)
        assert result.exit_code == 2 and "is not valid UTF-8" in result.stderr and result.stderr.count("\n") == 1
    assert snapshot(project) == before


@pytest.mark.parametrize("args, message", [
    (["--home", "", "session", "list"], "--home: must not be empty"),
    (["--memory-dir", " ", "memory", "list"], "--memory-dir: must not be empty"),
    (["memory", "store", "  "], "the memory text must not be empty"),
    (["episodic", "add", ""], "the episode text must not be empty"),
    (["session", "prune", "--older-than", "99999999999999w"], "is too long a duration"),
    (["episodic", "get", "--days-back", "100000000"], "--days-back"),
    (["check", ""], "a PATH must not be empty"),
    (["upsonic", "sessions", "--db", "/dev/null"], "/dev/null: not a database file"),
    (["--lock-timeout", "nan", "memory", "store", "x"], "--lock-timeout: must be a number of seconds"),
    (["--lock-timeout", "inf", "memory", "store", "x"], "--lock-timeout: must be a number of seconds"),
])
def test_empty_and_out_of_range_values_exit_2(cli, project, args, message):
    assert message in refused(cli, project, *args, code=2)


def test_rename_to_a_blank_id_is_refused(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "   ")
    assert result.exit_code == 2 and "must not be blank" in result.stderr
    assert not (fixture_home / "sessions" / "___.json").exists()


def test_a_session_name_cannot_reach_outside_the_sessions_dir(cli, fixture_home):
    target = fixture_home / "learn" / "private" / "alice" / "persona.json"
    result = cli("--home", fixture_home, "session", "delete", "../learn/private/alice/persona", "--yes", "--force")
    assert result.exit_code == 3 and target.exists()
    assert not Path(f"{target}.lock").exists()


def test_reset_of_an_unknown_user_is_not_found_and_creates_nothing(cli, project):
    result = cli("memory", "reset", "--all", "--user-id", "typo", "--yes")
    assert result.exit_code == 3 and "no memory for user 'typo'" in result.stderr
    assert not (project / ".praisonai" / "memory" / "typo").exists()


def test_bad_config_json_values_and_entities_are_refused_naming_them(cli, project):
    config = project / ".praisonai/memory/bob/config.json"
    config.write_text(json.dumps({"short_term_limit": "abc"}))
    result = cli("memory", "store", "x", "--user-id", "bob")
    assert result.exit_code == 4 and "'short_term_limit' is a string, not a whole number" in result.stderr
    entities = project / ".praisonai/memory/alice/entities.json"
    data = json.loads(entities.read_text())
    next(iter(data.values()))["attributes"] = None
    entities.write_text(json.dumps(data))
    before = entities.read_bytes()
    result = cli("memory", "extract", "My name is John", "--store", "--user-id", "alice")
    assert result.exit_code == 4 and entities.read_bytes() == before


def test_tool_calls_of_the_wrong_shape_are_reported_not_fatal(cli, tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    doc = {"session_id": "odd", "messages": [{"role": "assistant", "content": "", "tool_calls": 5},
                                             {"role": "assistant", "content": "", "tool_calls": ["x"]}]}
    (sessions / "odd.json").write_text(json.dumps(doc))
    home = tmp_path / "h"
    assert cli("--home", home, "session", "show", "odd").exit_code == 0
    assert cli("--home", home, "session", "export", "odd", "--format", "markdown").exit_code == 0
    report = cli("check", home, "--json")
    assert report.exit_code == 1
    assert [f["code"] for f in report.json()["findings"] if f["severity"] == "error"] == [
        "message.tool_calls", "message.tool_calls"]


def test_sqlite_memory_with_metadata_that_is_not_json(cli, project):
    path = project / ".praisonai" / "short_term.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE short_term_memory (id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL, "
                 "metadata TEXT, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)")
    conn.execute("INSERT INTO short_term_memory (content, metadata) VALUES ('hello', 'not json')")
    conn.commit()
    conn.close()
    rows = cli("memory", "list", "--provider", "sqlite", "--user-id", "", "--json").json()
    assert rows[0]["item"]["metadata"] == "not json"


def test_sqlite_delete_of_an_id_in_both_tiers_needs_type(cli, project):
    both = cli("memory", "delete", "1", "--provider", "sqlite", "--user-id", "alice", "--yes")
    assert both.exit_code == 2 and "give --type short or --type long" in both.stderr
    dry = cli("memory", "delete", "1", "--provider", "sqlite", "--user-id", "alice", "--type", "long", "--dry-run")
    assert dry.stdout == "would delete long_term memory 1\n"
    [done] = cli("memory", "delete", "1", "--provider", "sqlite", "--user-id", "alice", "--type", "long", "--yes",
                 "--json").json()
    assert done["type"] == "long_term"
    short = cli("memory", "list", "--provider", "sqlite", "--user-id", "alice", "--type", "short", "--json").json()
    assert [r["item"]["id"] for r in short] == ["1", "3"]


def test_import_refuses_sessions_the_library_could_not_load(cli, tmp_path):
    payload = tmp_path / "p.json"
    for bad, message in (({"session_id": "x", "messages": None}, "'messages' must be a list"),
                         ({"session_id": 5, "messages": []}, "session_id is a number, not a string"),
                         ({"session_id": "x", "messages": [], "last_compaction": {"summary": "s"}},
                          "integer message_index")):
        payload.write_text(json.dumps({"version": 1, "sessions": [bad]}))
        result = cli("--home", tmp_path / "h", "session", "import", payload)
        assert result.exit_code == 2 and message in result.stderr
    assert not (tmp_path / "h").exists()


def test_delete_dry_run_reports_the_same_refusal_as_the_real_run(cli, fixture_home):
    cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "just now")
    dry = cli("--home", fixture_home, "session", "delete", "my_chat", "--dry-run")
    real = cli("--home", fixture_home, "session", "delete", "my_chat", "--yes")
    assert dry.exit_code == real.exit_code == 4 and "--force" in dry.stderr


def test_a_single_delete_blocked_by_a_lock_exits_4_on_stderr(cli, fixture_home):
    holder = hold_flock(fixture_home / "sessions" / "my_chat.json.lock", 10)
    try:
        result = cli("--home", fixture_home, "--lock-timeout", "0.3", "session", "delete", "my_chat", "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr.startswith("praisonmem: error: failed my_chat") and "could not lock" in result.stderr


def test_a_configured_json_default_does_not_override_an_explicit_format(cli, fixture_home, monkeypatch):
    monkeypatch.setenv("PRAISONMEM_OUTPUT", "json")
    result = cli("--home", fixture_home, "session", "export", "my_chat", "--format", "markdown")
    assert result.exit_code == 0 and result.stdout.startswith("# Session `my_chat`")


def test_listing_a_home_without_sessions_warns(cli, tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()  # a --home that does not exist at all exits 3 (tests/cli/test_newcomer_hints.py)
    result = cli("--home", tmp_path / "empty", "session", "list")
    assert result.exit_code == 0 and f"no sessions directory at {tmp_path / 'empty' / 'sessions'}" in result.stderr
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "typo"))  # the environment's home is the library's rule
    result = cli("session", "list")
    assert result.exit_code == 0 and f"no sessions directory at {tmp_path / 'typo' / 'sessions'}" in result.stderr


def test_ndjson_on_every_list_like_command(cli):
    assert all(json.loads(line)["name"] for line in cli("memory", "providers", "--ndjson").stdout.splitlines())
    assert len(cli("config", "show", "--ndjson").stdout.splitlines()) == 13  # the keys of core/config.py, pager among them


def test_upsonic_import_and_convert_overwrites_need_yes(cli, db, tmp_path, fixture_home):
    export = tmp_path / "e.json"
    cli("upsonic", "export", "--db", db, "-o", export)
    refused = cli("upsonic", "import", export, "--db", db)
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    assert cli("upsonic", "import", export, "--db", db, "--yes").exit_code == 0
    cli("upsonic", "convert", "session_001", "--to-praisonai", "--db", db, "--home", tmp_path / "h")
    again = cli("upsonic", "convert", "session_001", "--to-praisonai", "--replace", "--db", db, "--home",
                tmp_path / "h")
    assert again.exit_code == 4 and "pass --yes" in again.stderr


def test_upsonic_conversion_of_ids_that_share_a_file_is_refused(cli, db, tmp_path):
    conn = sqlite3.connect(db)
    for sid in ("a.b", "a/b"):
        conn.execute("INSERT INTO upsonic_sessions (session_id, session_type, created_at) VALUES (?, 'agent', 1)",
                     (sid,))
    conn.commit()
    conn.close()
    result = cli("upsonic", "convert", "a.b", "a/b", "--to-praisonai", "--db", db, "--home", tmp_path / "h")
    assert result.exit_code == 2 and "map to the same PraisonAI file (a_b.json)" in result.stderr
    assert not (tmp_path / "h").exists()


def test_an_upsonic_store_with_only_one_table(cli, tmp_path):
    from praisonmem.core.upsonic import user_memory_ddl

    path = tmp_path / "users-only.db"
    conn = sqlite3.connect(path)
    for statement in user_memory_ddl("upsonic_user_memories"):
        conn.execute(statement)
    conn.commit()
    conn.close()
    assert cli("upsonic", "sessions", "--db", path, "--json").json() == []
    assert cli("upsonic", "user-memory", "set", "u1", "a=1", "--db", path).exit_code == 0
    doc = PRAISONAI_FIXTURES / "home" / "sessions" / "my_chat.json"
    # a session named by its path is taken only in the home's sessions dir
    assert cli("--home", doc.parent.parent, "upsonic", "convert", str(doc), "--from-praisonai", "--db", path
               ).exit_code == 0
    assert [r["session_id"] for r in cli("upsonic", "sessions", "--db", path, "--json").json()] == ["my_chat"]


def test_reading_an_idle_wal_database_leaves_no_sidecar_files(cli, db):
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert sorted(p.name for p in db.parent.iterdir()) == ["data.db"]
    before = db.read_bytes()
    assert len(cli("upsonic", "sessions", "--db", db, "--json").json()) == 4
    assert cli("upsonic", "user-memory", "user_123", "--db", db).exit_code == 0
    assert sorted(p.name for p in db.parent.iterdir()) == ["data.db"] and db.read_bytes() == before


def test_a_flipped_byte_in_a_backup(cli, fixture_home, tmp_path):
    archive = Path(cli("--home", fixture_home, "backup", "create", "-o", tmp_path / "out", "--json").json()["path"])
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    verify = cli("backup", "verify", archive)
    assert verify.exit_code == 1 and verify.stderr == ""
    listed = cli("backup", "list", tmp_path / "out", "--json")
    assert listed.exit_code == 0
    restore = cli("backup", "restore", archive, "--to", tmp_path / "r", "--yes")
    assert restore.exit_code == 1 and not (tmp_path / "r").exists()


def test_no_traceback_for_a_session_whose_messages_hold_odd_values(tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "odd.json").write_text(json.dumps({"session_id": "odd", "messages": [None, 3, "x", {"role": None}],
                                                   "last_compaction": {"message_index": "x"}}))
    for args in (["session", "show", "odd"], ["session", "show", "odd", "--working"], ["session", "search", "x"],
                 ["session", "list"], ["session", "export", "odd", "--format", "markdown"],
                 ["session", "export", "odd", "--format", "jsonl"]):
        proc = subprocess.run([sys.executable, "-m", "praisonmem", "--home", str(tmp_path / "h"), *args],
                              capture_output=True, text=True)
        assert proc.returncode in (0, 1, 4), (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, (args, proc.stderr)


def test_an_upsonic_row_with_malformed_json_columns_still_lists(cli, db):
    conn = sqlite3.connect(db)
    conn.execute("UPDATE upsonic_sessions SET messages = 'not json', runs = '\"{broken' WHERE session_id = 'session_001'")
    conn.commit()
    conn.close()
    rows = {r["session_id"]: r for r in cli("upsonic", "sessions", "--db", db, "--json").json()}
    assert (rows["session_001"]["message_count"], rows["session_001"]["run_count"]) == (None, None)
    assert rows["session_002"]["message_count"] == 2


def test_searching_a_home_without_sessions_warns_as_listing_does(cli, tmp_path, monkeypatch):
    """A mistyped PRAISONAI_HOME searches nothing: the search says where it looked, or it reads as 'no hit'."""
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "typo"))
    listed = cli("session", "list")
    result = cli("session", "search", "invoice", "--json")
    assert (result.exit_code, result.stdout) == (0, "[]\n")
    assert result.stderr == listed.stderr == (
        f"praisonmem: warning: no sessions directory at {tmp_path / 'typo' / 'sessions'} (PRAISONAI_HOME)\n")
