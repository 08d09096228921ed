"""session adopt / rename: the ways they could lose or strand history.

Homes are built from files real praisonaiagents releases wrote (tests/fixtures/praisonai-eras/:
1.5.122 wrote md5-era name-only ids, 1.6.157 sha256-era ones).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from praisonmem.core.sessions import history_id, workspace_id
from tests.helpers import (MD5_CAFE, MD5_LEGACY_BOT, MD5_UNNAMED, SHA_CAFE, SHA_LEGACY_BOT, SHA_UNNAMED, era_home,
                           snapshot, spill)


def load(home: Path, stem: str) -> dict:
    return json.loads((home / "sessions" / f"{stem}.json").read_text(encoding="utf-8"))


def turns(doc: dict) -> list[tuple]:
    return [(m["role"], m["content"], m["timestamp"]) for m in doc.get("archived_messages", []) + doc["messages"]]


def library_bytes(doc: dict) -> bytes:
    """How the library (and so an adopt or rename) serialises a session."""
    return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# ---------------------------------------------------------------- global scope


def test_adopt_in_global_scope_says_the_library_loads_the_legacy_file_and_changes_nothing(
        cli, tmp_path, project, monkeypatch):
    home = era_home(tmp_path, "1.6.157")
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "1")
    monkeypatch.chdir(project)
    before = snapshot(home)
    result = cli("--home", home, "session", "adopt", "Legacy Bot")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"skipped {SHA_LEGACY_BOT}: PRAISONAI_GLOBAL_SESSIONS is set, so the library already loads "
        f"{SHA_LEGACY_BOT}.json for agent 'Legacy Bot'; nothing adopted (give --workspace DIR to adopt into "
        "that directory's workspace anyway)\n")
    data = cli("--home", home, "session", "adopt", "--all", "--json")
    assert data.exit_code == 0 and {c["action"] for c in data.json()} == {"skipped"}
    assert snapshot(home) == before


def test_adopt_in_global_scope_refuses_when_the_agent_uses_its_global_file(cli, tmp_path, project, monkeypatch):
    home = era_home(tmp_path, "1.6.157")
    global_file = home / "sessions" / f"{history_id('global', 'Legacy Bot')}.json"
    global_file.write_text(json.dumps({"session_id": global_file.stem, "messages": []}), encoding="utf-8")
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "TRUE")
    before = snapshot(home)
    result = cli("--home", home, "session", "adopt", "Legacy Bot")
    assert result.exit_code == 4 and result.stdout == ""
    assert result.stderr == (
        f"praisonmem: error: PRAISONAI_GLOBAL_SESSIONS is set: agents named 'Legacy Bot' use {global_file.name} "
        "(global scope), not a workspace history, so adopting would not reach them; nothing changed (give "
        "--workspace DIR to adopt into that directory's workspace anyway)\n")
    assert snapshot(home) == before


def test_adopt_in_global_scope_with_an_explicit_workspace_adopts(cli, tmp_path, project, monkeypatch):
    home = era_home(tmp_path, "1.6.157")
    legacy = load(home, SHA_LEGACY_BOT)
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "yes")
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--workspace", project, "--json")
    assert result.exit_code == 0, result.stderr
    target = history_id(workspace_id(project), "Legacy Bot")
    assert [(c["action"], c["new_session_id"]) for c in result.json()] == [("adopt-moved", target)]
    assert load(home, target) == {**legacy, "session_id": target}
    assert not (home / "sessions" / f"{SHA_LEGACY_BOT}.json").exists()


# ---------------------------------------------------------------- both name-only files


def test_adopt_takes_both_name_only_files_of_an_agent_merged_oldest_first(cli, tmp_path, project, monkeypatch):
    home = era_home(tmp_path, "1.5.122", "1.6.157")
    md5, sha = load(home, MD5_LEGACY_BOT), load(home, SHA_LEGACY_BOT)
    monkeypatch.chdir(project)
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--json")
    assert result.exit_code == 0, result.stderr
    target = history_id(workspace_id(project), "Legacy Bot")
    assert [(c["action"], c["session_id"], c["new_session_id"]) for c in result.json()] == [
        ("adopt-moved", MD5_LEGACY_BOT, target), ("adopt-moved", SHA_LEGACY_BOT, target)]
    assert "merged with history_8fe938c0.json (both name-only files of this agent, oldest first)" \
        in result.json()[0]["detail"]
    adopted = load(home, target)
    assert sorted(turns(adopted)) == sorted(turns(md5) + turns(sha))
    assert turns(adopted) == sorted(turns(adopted), key=lambda t: t[2])  # one history, in time order
    assert adopted["session_id"] == target and adopted["agent_id"] == sha["agent_id"]  # the newer file's fields
    assert not (home / "sessions" / f"{MD5_LEGACY_BOT}.json").exists()
    assert not (home / "sessions" / f"{SHA_LEGACY_BOT}.json").exists()


def test_adopt_dry_run_names_both_name_only_files(cli, tmp_path, project):
    home = era_home(tmp_path, "1.5.122", "1.6.157")
    before = snapshot(home)
    out = cli("--home", home, "session", "adopt", "Legacy Bot", "--workspace", project, "--dry-run").stdout
    target = history_id(workspace_id(project), "Legacy Bot")
    assert out.splitlines()[0].startswith(f"would move {MD5_LEGACY_BOT}.json → {target}.json [")
    assert out.splitlines()[1].startswith(f"would move {SHA_LEGACY_BOT}.json → {target}.json [")
    assert snapshot(home) == before


# ---------------------------------------------------------------- items 3 + 4: --all


def test_adopt_all_includes_the_unnamed_agent_and_both_eras(cli, tmp_path, project, monkeypatch):
    home = era_home(tmp_path, "1.5.122", "1.6.157")
    listed = {r["session_id"] for r in cli("--home", home, "session", "list", "--scope", "legacy", "--json").json()}
    assert {MD5_UNNAMED, SHA_UNNAMED} <= listed
    unnamed = turns(load(home, MD5_UNNAMED)) + turns(load(home, SHA_UNNAMED))
    monkeypatch.chdir(project)
    result = cli("--home", home, "session", "adopt", "--all", "--json")
    assert result.exit_code == 0, result.stderr
    wid = workspace_id(project)
    moved = {c["session_id"]: c["new_session_id"] for c in result.json() if c["action"] == "adopt-moved"}
    assert moved == {MD5_UNNAMED: history_id(wid, "agent"), SHA_UNNAMED: history_id(wid, "agent"),
                     MD5_LEGACY_BOT: history_id(wid, "Legacy Bot"), SHA_LEGACY_BOT: history_id(wid, "Legacy Bot"),
                     MD5_CAFE: history_id(wid, "Café ✓ 日本"), SHA_CAFE: history_id(wid, "Café ✓ 日本")}
    assert sorted(turns(load(home, history_id(wid, "agent")))) == sorted(unnamed)
    assert cli("--home", home, "session", "list", "--scope", "legacy", "--json").json() == []


# ---------------------------------------------------------------- spilled turns


def test_rename_moves_the_sessions_spilled_turns_with_it(cli, fixture_home):
    waiting = spill(fixture_home, "my_chat", "my_chat", "spilled while the disk was full")
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "renamed/chat", "--force", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["detail"] == "1 spilled turn in 1 spill file move with it"
    assert not waiting.exists()
    moved = waiting.with_name("renamed_chat" + waiting.name[len("my_chat"):])
    record = json.loads(moved.read_text(encoding="utf-8"))
    assert record["session_id"] == "renamed/chat"
    assert [m["content"] for m in record["messages"]] == ["spilled while the disk was full"]
    assert oct(moved.stat().st_mode & 0o777) == "0o600"
    rows = {r["session_id"]: r for r in cli("--home", fixture_home, "session", "list", "--json").json()}
    assert rows["renamed/chat"]["spilled_count"] == 1


def test_adopt_moves_the_legacy_ids_spilled_turns_to_the_workspace_id(cli, tmp_path, project):
    home = era_home(tmp_path, "1.6.157")
    waiting = spill(home, SHA_LEGACY_BOT, SHA_LEGACY_BOT, "a turn the legacy session never got")
    assert cli("--home", home, "session", "adopt", "Legacy Bot", "--workspace", project).exit_code == 0
    target = history_id(workspace_id(project), "Legacy Bot")
    assert not waiting.exists()
    record = json.loads(waiting.with_name(target + waiting.name[len(SHA_LEGACY_BOT):]).read_text(encoding="utf-8"))
    assert record["session_id"] == target and record["messages"][0]["content"] == "a turn the legacy session never got"
    assert list(record) == ["session_id", "spilled_at", "messages"]


def test_adopt_copy_copies_the_spilled_turns(cli, tmp_path, project):
    home = era_home(tmp_path, "1.6.157")
    waiting = spill(home, SHA_LEGACY_BOT, SHA_LEGACY_BOT, "kept for both")
    assert cli("--home", home, "session", "adopt", "Legacy Bot", "--copy", "--workspace", project).exit_code == 0
    target = history_id(workspace_id(project), "Legacy Bot")
    assert waiting.exists()
    assert waiting.with_name(target + waiting.name[len(SHA_LEGACY_BOT):]).exists()


# ---------------------------------------------------------------- finishing an interrupted move


def test_rename_rerun_finishes_when_the_target_holds_exactly_the_session(cli, fixture_home):
    sessions = fixture_home / "sessions"
    doc = json.loads((sessions / "my_chat.json").read_text(encoding="utf-8"))
    (sessions / "kept.json").write_bytes(library_bytes({**doc, "session_id": "kept"}))  # killed before the unlink
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "kept", "--force")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("renamed 'my_chat' → 'kept' (my_chat.json → kept.json) [finishes an interrupted "
                             "rename: kept.json already holds exactly this session]\n")
    assert not (sessions / "my_chat.json").exists()
    assert json.loads((sessions / "kept.json").read_text(encoding="utf-8")) == {**doc, "session_id": "kept"}


def test_rename_rerun_refuses_when_the_target_differs(cli, fixture_home):
    sessions = fixture_home / "sessions"
    doc = json.loads((sessions / "my_chat.json").read_text(encoding="utf-8"))
    doc["messages"].append({"role": "user", "content": "written since", "timestamp": 1.0, "metadata": {}})
    (sessions / "kept.json").write_bytes(library_bytes({**doc, "session_id": "kept"}))
    before = snapshot(fixture_home)
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "kept", "--force")
    assert result.exit_code == 4
    assert result.stderr == f"praisonmem: error: cannot rename to 'kept': {sessions / 'kept.json'} already exists\n"
    assert snapshot(fixture_home) == before


def test_adopt_rerun_finishes_when_the_target_holds_exactly_the_legacy_history(cli, tmp_path, project):
    home = era_home(tmp_path, "1.6.157")
    target = history_id(workspace_id(project), "Legacy Bot")
    legacy = load(home, SHA_LEGACY_BOT)
    (home / "sessions" / f"{target}.json").write_bytes(library_bytes({**legacy, "session_id": target}))
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--workspace", project)
    assert (result.exit_code, result.stderr) == (0, "")
    assert f"finishes an interrupted adopt: {target}.json already holds this history" in result.stdout
    assert not (home / "sessions" / f"{SHA_LEGACY_BOT}.json").exists()
    assert load(home, target) == {**legacy, "session_id": target}


def test_adopt_rerun_refuses_when_the_target_lacks_part_of_the_legacy_history(cli, tmp_path, project):
    home = era_home(tmp_path, "1.6.157")
    target = history_id(workspace_id(project), "Legacy Bot")
    legacy = load(home, SHA_LEGACY_BOT)
    partial = {**legacy, "session_id": target, "messages": legacy["messages"][:-1]}
    (home / "sessions" / f"{target}.json").write_bytes(library_bytes(partial))
    before = snapshot(home)
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--workspace", project)
    assert result.exit_code == 4 and "pass --merge to combine the histories or --replace" in result.stderr
    assert snapshot(home) == before


def test_adopt_merge_rerun_after_the_write_finishes(cli, tmp_path, project):
    home = era_home(tmp_path, "1.6.157")
    target = home / "sessions" / f"{history_id(workspace_id(project), 'Legacy Bot')}.json"
    target.write_text(json.dumps({"session_id": target.stem, "messages": [
        {"role": "user", "content": "a workspace turn", "timestamp": 1896109795.0, "metadata": {}}]}))
    legacy_file = home / "sessions" / f"{SHA_LEGACY_BOT}.json"
    kept = legacy_file.read_bytes()
    assert cli("--home", home, "session", "adopt", "Legacy Bot", "--merge", "--workspace", project).exit_code == 0
    merged = target.read_bytes()
    legacy_file.write_bytes(kept)  # as if killed between writing the target and removing the legacy file
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--merge", "--workspace", project)
    assert result.exit_code == 0 and "finishes an interrupted adopt" in result.stdout
    assert target.read_bytes() == merged and not legacy_file.exists()


def test_check_does_not_promise_to_merge_spilled_turns_of_a_session_that_is_gone(cli, fixture_home):
    spill(fixture_home, "renamed-away", "renamed-away", "stranded")
    spill(fixture_home, "my_chat", "my_chat", "waiting")
    data = cli("--home", fixture_home, "check", "--json").json()
    messages = {Path(f["file"]).name.split(".")[0]: f["message"] for f in data["findings"]
                if f["code"] == "leftover.spill"}
    assert messages["renamed-away"] == (
        "1 turn for session 'renamed-away' waits here after a failed write, but no session file holds "
        "that id (renamed, adopted or deleted?): the library merges them only if an agent opens "
        "'renamed-away' again")
    assert messages["my_chat"] == ("1 turn for session 'my_chat' waits here after a failed write; the library "
                                   "merges them on the session's next load")
