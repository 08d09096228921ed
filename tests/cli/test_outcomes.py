"""The result contract: every command that changes something prints, with --json, an array of change records
whose keys are pinned here (real runs and --dry-run alike), and words them on stdout, failures on stderr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

BASE = {"action", "dry_run", "detail"}  # every change record
SESSION = BASE | {"session_id", "file", "new_session_id", "target"}  # the session change record (docs/exit-codes-and-json.md)
ITEM = {"id", "content", "metadata", "created_at", "updated_at", "access_count", "importance"}  # FileMemory's
ENTRY = {"id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used"}  # a learn entry


@pytest.fixture
def world(fixture_home, project, tmp_path):
    """A PraisonAI home, a project with FileMemory (the cwd), an Upsonic database and a session export."""
    db = tmp_path / "data.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", db)
    export = tmp_path / "sessions.json"
    return {"home": fixture_home, "db": db, "export": export, "tmp": tmp_path, "project": project}


def records(cli, *args) -> list[dict]:
    result = cli(*args, "--json")
    assert result.exit_code == 0, (args, result.stderr)
    data = result.json()
    assert isinstance(data, list) and data, args
    return data


def keys(cli, *args) -> set[str]:
    found = {frozenset(r) for r in records(cli, *args)}
    assert len(found) == 1, found
    return set(next(iter(found)))


def test_session_commands_print_the_readmes_change_record(cli, world):
    home = ["--home", world["home"]]
    assert keys(cli, *home, "session", "rename", "history_8fe938c0", "renamed", "--dry-run") == SESSION
    assert keys(cli, *home, "session", "rename", "history_8fe938c0", "renamed") == SESSION
    assert keys(cli, *home, "session", "rename", "renamed", "--title", "t") == SESSION
    assert keys(cli, *home, "session", "adopt", "Old Bot", "--dry-run") == SESSION
    assert keys(cli, *home, "session", "adopt", "--all", "--copy") == SESSION
    assert keys(cli, *home, "session", "delete", "my_chat", "--dry-run") == SESSION
    assert keys(cli, *home, "session", "delete", "my_chat", "--yes") == SESSION
    assert keys(cli, *home, "session", "prune", "--older-than", "1s", "--dry-run") == SESSION
    assert cli(*home, "session", "export", "--all", "-o", world["export"]).exit_code == 0
    fresh = ["--home", world["tmp"] / "fresh"]
    assert keys(cli, *fresh, "session", "import", world["export"], "--dry-run") == SESSION
    assert keys(cli, *fresh, "session", "import", world["export"]) == SESSION


def test_memory_and_episodic_writes_keep_their_old_keys_in_the_record(cli, world):
    user = ["--user-id", "alice"]
    assert keys(cli, "memory", "store", "likes tea", *user) == BASE | ITEM  # the stored item, as it was printed
    assert keys(cli, "memory", "delete", "b6405825f19f0274", *user, "--dry-run") == BASE | {"type", "id"}
    assert keys(cli, "memory", "delete", "b6405825f19f0274", *user, "--yes") == BASE | {"type", "id", "item"}
    reset = BASE | {"reset", "user_id", "provider", "removed"}
    assert keys(cli, "memory", "reset", "--long", *user, "--dry-run") == reset
    assert keys(cli, "memory", "reset", "--long", *user, "--yes") == reset
    extracted = BASE | {"type", "content", "importance", "source", "store_as", "stored_text", "status"}
    assert keys(cli, "memory", "extract", "My name is Ann and I prefer Go.", *user) == extracted
    assert keys(cli, "memory", "extract", "My name is Ann and I prefer Go.", *user, "--store") == extracted
    assert keys(cli, "episodic", "add", "hiked", "--date", "2026-03-05", *user) == BASE | {"date", "item"}
    [added] = records(cli, "episodic", "add", "swam", "--date", "2026-03-05", *user)
    episode = BASE | {"type", "id", "date"}
    assert keys(cli, "episodic", "delete", added["item"]["id"], "--date", "2026-03-05", *user, "--dry-run") == episode
    assert keys(cli, "episodic", "delete", added["item"]["id"], "--date", "2026-03-05", *user, "--yes") == episode


def test_learn_writes_keep_their_old_keys_in_the_record(cli, world):
    home = ["--home", world["home"]]
    assert keys(cli, *home, "learn", "add", "persona", "Likes tea", "--user-id", "alice") == BASE | ENTRY | {
        "added", "file"}
    [entry] = records(cli, *home, "learn", "add", "persona", "likes TEA", "--user-id", "alice")
    assert (entry["action"], entry["added"], entry["detail"]) == ("kept", False, "already there; not added again")
    deleted = BASE | ENTRY | {"scope", "user_id", "store", "file"}
    assert keys(cli, *home, "learn", "delete", entry["id"], "--dry-run") == deleted
    assert keys(cli, *home, "learn", "delete", entry["id"], "--yes") == deleted
    cleared = BASE | {"store", "file", "removed"}
    assert keys(cli, *home, "learn", "clear", "threads", "--user-id", "alice", "--dry-run") == cleared
    assert keys(cli, *home, "learn", "clear", "threads", "--user-id", "alice", "--yes") == cleared


def test_upsonic_writes_keep_their_old_keys_in_the_record(cli, world):
    db = ["--db", world["db"]]
    edited = BASE | {"user_id", "created", "before", "after"}
    assert keys(cli, "upsonic", "user-memory", "set", "user_123", "tone=warm", *db, "--dry-run") == edited
    assert keys(cli, "upsonic", "user-memory", "set", "user_123", "tone=warm", *db) == edited
    assert keys(cli, "upsonic", "user-memory", "unset", "user_123", "tone", *db) == edited
    traits = world["tmp"] / "traits.json"
    traits.write_text('{"only": "this"}')
    assert keys(cli, "upsonic", "user-memory", "replace", "user_123", "--from", traits, *db, "--yes") == edited
    export = world["tmp"] / "upsonic.json"
    assert cli("upsonic", "export", *db, "-o", export).exit_code == 0
    fresh = ["--db", world["tmp"] / "fresh.db"]
    assert keys(cli, "upsonic", "import", export, *fresh, "--dry-run") == BASE | {"kind", "id"}
    assert keys(cli, "upsonic", "import", export, *fresh) == BASE | {"kind", "id"}
    to = ["--home", world["tmp"] / "h"]
    assert keys(cli, "upsonic", "convert", "session_001", "--to-praisonai", *db, *to, "--dry-run") == BASE | {
        "session_id", "file"}
    assert keys(cli, "upsonic", "convert", "session_001", "--to-praisonai", *db, *to) == BASE | {"session_id", "file"}
    assert keys(cli, "--home", world["home"], "upsonic", "convert", "my_chat", "--from-praisonai", *db) == BASE | {
        "session_id"}


def test_backup_restore_and_config_print_change_records(cli, world, config):
    made = cli("--home", world["home"], "backup", "create", "-o", world["tmp"] / "b", "--json").json()
    restore = ["backup", "restore", made["path"], "--to", world["tmp"] / "r"]
    assert keys(cli, *restore, "--dry-run") == BASE | {"path", "target"}
    assert keys(cli, *restore, "--yes") == BASE | {"path", "target"}
    assert keys(cli, "config", "set", "backup.keep", "3") == BASE | {"key", "value", "path"}
    assert keys(cli, "config", "unset", "backup.keep") == BASE | {"key", "removed", "path"}


def test_a_dry_run_says_would_and_changes_nothing_and_the_real_run_says_what_it_did(cli, world):
    home = ["--home", world["home"]]
    dry = cli(*home, "session", "rename", "my_chat", "--title", "Tea", "--dry-run")
    assert (dry.exit_code, dry.stdout, dry.stderr) == (0, "would set the title of 'my_chat' to 'Tea'\n", "")
    done = cli(*home, "session", "rename", "my_chat", "--title", "")
    assert (done.exit_code, done.stdout) == (0, "cleared the title of 'my_chat'\n")
    [record] = records(cli, *home, "session", "rename", "my_chat", "--title", "Tea", "--dry-run")
    assert (record["action"], record["dry_run"], record["detail"]) == ("retitled", True, "Tea")
    stored = json.loads((world["home"] / "sessions" / "my_chat.json").read_text())
    assert "title" not in stored.get("metadata", {})


def test_ids_are_printed_alone_by_the_commands_that_create_something(cli, world):
    stored = cli("memory", "store", "likes tea", "--user-id", "alice")
    added = cli("episodic", "add", "hiked", "--user-id", "alice")
    learned = cli("--home", world["home"], "learn", "add", "persona", "Likes tea")
    again = cli("--home", world["home"], "learn", "add", "persona", "likes tea")
    for result in (stored, added, learned):
        assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1 and " " not in result.stdout.strip()
    assert again.stdout == f"{learned.stdout.strip()} (already there; not added again)\n"


def test_some_failed_exits_1_and_all_failed_for_one_reason_exits_with_its_code(cli, world):
    from tests.helpers import hold_flock

    sessions = world["home"] / "sessions"
    holder = hold_flock(sessions / "my_chat.json.lock", 10)
    try:
        both = cli("--home", world["home"], "--lock-timeout", "0.2", "session", "delete", "my_chat", "café-日本",
                   "--yes", "--force")
        one = cli("--home", world["home"], "--lock-timeout", "0.2", "session", "delete", "my_chat", "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert both.exit_code == 1 and both.stdout == "deleted café-日本 (café-日本.json)\n"
    assert both.stderr.startswith("praisonmem: error: failed my_chat: ") and both.stderr.count("\n") == 1
    assert one.exit_code == 4 and one.stdout == ""
    assert Path(sessions / "my_chat.json").exists()
