"""session rename/adopt/delete/prune/export/import and check from the command line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import hold_flock, snapshot

CHANGE_KEYS = {"action", "session_id", "file", "dry_run", "new_session_id", "target", "detail"}


def test_rename_prints_what_changed_and_json_is_an_array_of_changes(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "rename", "history_8fe938c0", "legacy-archive")
    assert result.stdout == "renamed 'history_8fe938c0' → 'legacy-archive' (history_8fe938c0.json → legacy-archive.json)\n"
    data = cli("--home", fixture_home, "session", "rename", "legacy-archive", "--title", "Old chats", "--json").json()
    assert len(data) == 1 and set(data[0]) == CHANGE_KEYS
    assert (data[0]["action"], data[0]["detail"]) == ("retitled", "Old chats")


def test_rename_onto_an_existing_session_exits_4(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "rename", "history_8fe938c0", "my_chat")
    assert result.exit_code == 4
    assert result.stderr == (f"praisonmem: error: cannot rename to 'my_chat': "
                             f"{fixture_home / 'sessions' / 'my_chat.json'} already exists\n")


@pytest.mark.parametrize("args", [["my_chat"], ["my_chat", "new", "--title", "t"]])
def test_rename_needs_exactly_one_of_new_id_and_title(cli, fixture_home, args):
    result = cli("--home", fixture_home, "session", "rename", *args)
    assert result.exit_code == 2 and "give NEW_ID to rename the session, or --title TEXT" in result.stderr


def test_dry_run_changes_nothing(cli, fixture_home):
    before = snapshot(fixture_home)
    out = cli("--home", fixture_home, "session", "rename", "history_8fe938c0", "x", "--dry-run").stdout
    assert out.startswith("would rename 'history_8fe938c0' → 'x'")
    assert cli("--home", fixture_home, "session", "delete", "my_chat", "--dry-run").stdout == \
        "would delete my_chat (my_chat.json)\n"
    assert cli("--home", fixture_home, "session", "adopt", "--all", "--dry-run").exit_code == 0
    assert cli("--home", fixture_home, "session", "prune", "--older-than", "1s", "--dry-run").exit_code == 0
    assert snapshot(fixture_home) == before


def test_adopt_with_no_legacy_file_exits_3(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "adopt", "Weather Bot")
    assert result.exit_code == 3 and "no legacy session for agent 'Weather Bot'" in result.stderr


def test_adopt_when_the_target_exists_needs_merge_or_replace(cli, fixture_home):
    copied = cli("--home", fixture_home, "session", "adopt", "Old Bot", "--copy", "--json").json()[0]
    target = Path(copied["target"])
    doc = json.loads(target.read_text(encoding="utf-8"))
    doc["messages"].append({"role": "user", "content": "an agent carried on here", "timestamp": 1.0e10,
                            "metadata": {}})
    target.write_text(json.dumps(doc), encoding="utf-8")
    result = cli("--home", fixture_home, "session", "adopt", "Old Bot")
    assert result.exit_code == 4 and "pass --merge to combine the histories or --replace" in result.stderr
    refused = cli("--home", fixture_home, "session", "adopt", "Old Bot", "--replace")
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    assert cli("--home", fixture_home, "session", "adopt", "Old Bot", "--merge").exit_code == 0
    assert not (fixture_home / "sessions" / "history_ccc5e5d4.json").exists()


def test_adopt_all_moves_every_matching_legacy_file(cli, fixture_home):
    data = cli("--home", fixture_home, "session", "adopt", "--all", "--json").json()
    assert [(c["session_id"], c["action"]) for c in data] == [("history_8fe938c0", "adopt-moved"),
                                                              ("history_ccc5e5d4", "adopt-moved")]
    rows = cli("--home", fixture_home, "session", "list", "--scope", "workspace", "--json").json()
    assert sorted(r["agent_name"] for r in rows) == ["Legacy Bot", "Old Bot"]
    assert cli("--home", fixture_home, "session", "list", "--scope", "legacy", "--json").json() == []


def test_adopt_for_another_workspace_dir(cli, fixture_home, tmp_path):
    from praisonmem.core.sessions import history_id

    target = tmp_path / "proj"
    target.mkdir()
    data = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--workspace", target, "--json").json()
    assert data[0]["new_session_id"] == history_id("dir:" + os.path.realpath(target), "Legacy Bot")
    bad = cli("--home", fixture_home, "session", "adopt", "Old Bot", "--workspace", tmp_path / "nope")
    assert bad.exit_code == 2


def test_delete_without_yes_in_a_non_interactive_run_exits_4(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "delete", "my_chat")
    assert result.exit_code == 4
    assert "not confirmed, nothing changed (pass --yes" in result.stderr
    assert (fixture_home / "sessions" / "my_chat.json").exists()


def test_delete_with_yes_and_an_unknown_name(cli, fixture_home):
    missing = cli("--home", fixture_home, "session", "delete", "my_chat", "nope", "--yes")
    assert missing.exit_code == 3 and (fixture_home / "sessions" / "my_chat.json").exists()
    done = cli("--home", fixture_home, "session", "delete", "my_chat", "café-日本", "--yes")
    assert done.exit_code == 0 and done.stdout.count("deleted") == 2


def test_prune_bad_duration_exits_2(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "prune", "--older-than", "a while")
    assert result.exit_code == 2
    assert "--older-than must be a duration such as 30d, 12h, 90m or 2w, got 'a while'" in result.stderr


def test_prune_deletes_old_sessions_with_yes(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "prune", "--older-than", "1s", "--keep", "10", "--yes", "--json")
    assert result.exit_code == 0
    assert [c["action"] for c in result.json()] == ["deleted", "deleted"]
    assert len(list((fixture_home / "sessions").glob("*.json"))) == 10


def test_import_of_a_non_export_exits_2(cli, fixture_home, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"some": "config"}')
    result = cli("--home", fixture_home, "session", "import", bad)
    assert result.exit_code == 2 and "not a praisonmem or PraisonAI session export" in result.stderr


def test_import_with_one_invalid_session_writes_nothing(cli, tmp_path):
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"version": 1, "sessions": [
        {"session_id": "ok-1", "messages": []}, {"session_id": "", "messages": []},
        {"session_id": "ok-2", "messages": []}]}))
    result = cli("--home", tmp_path / "h", "session", "import", payload)
    assert result.exit_code == 2 and "session 1: missing or empty session_id" in result.stderr
    assert not (tmp_path / "h").exists()


def test_export_import_round_trip_through_the_cli(cli, fixture_home, tmp_path):
    out = tmp_path / "all.json"
    summary = cli("--home", fixture_home, "session", "export", "--all", "-o", out, "--json").json()
    assert summary["count"] == 12 and summary["output"] == str(out)
    imported = cli("--home", tmp_path / "h2", "session", "import", out, "--json").json()
    assert [c["action"] for c in imported] == ["imported"] * 12
    again = cli("--home", tmp_path / "h2", "session", "import", out, "--on-conflict", "replace")
    assert again.exit_code == 4 and "pass --yes" in again.stderr
    stdout_export = cli("--home", fixture_home, "session", "export", "my_chat").json()
    assert stdout_export["sessions"][0]["session_id"] == "my_chat"


def test_a_lock_held_by_another_process_exits_4_within_the_timeout(cli, fixture_home):
    target = fixture_home / "sessions" / "my_chat.json"
    before = target.read_bytes()
    holder = hold_flock(fixture_home / "sessions" / "my_chat.json.lock", 10)
    try:
        started = time.monotonic()
        result = cli("--home", fixture_home, "--lock-timeout", "0.5", "session", "rename", "my_chat", "--title", "x")
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4 and elapsed < 3
    assert "could not lock" in result.stderr and "within 0.5s" in result.stderr
    assert target.read_bytes() == before


def test_a_session_that_does_not_parse_is_never_rewritten(cli, fixture_home):
    bad = fixture_home / "sessions" / "bad.json"
    bad.write_bytes(b'{"session_id": "bad", "messages": [')
    for args in (["rename", "bad", "good"], ["rename", "bad", "--title", "t"]):
        result = cli("--home", fixture_home, "session", *args)
        assert result.exit_code == 4 and "invalid JSON" in result.stderr
    assert bad.read_bytes() == b'{"session_id": "bad", "messages": ['
