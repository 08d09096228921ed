"""FileMemory's saved sessions and summaries, written by praisonaiagents 1.7.17 itself (``save_session``,
``add_summary``): praisonmem lists, shows, searches, deletes, backs up and checks them, and after each delete the
library reads back exactly the change and nothing else."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from tests.compat.conftest import last_json, run_library
from tests.helpers import refused, snapshot

WRITE = """
    import json
    from praisonaiagents.memory.file_memory import FileMemory
    fm = FileMemory(user_id="alice")
    fm.add_short_term("Prefers green tea")
    fm.add_long_term("Lives in Lisbon", importance=0.9)
    fm.add_entity("Bob", "person", {"role": "manager"})
    fm.save_session("standup", conversation_history=[
        {"role": "user", "content": "What did we decide about the café?"},
        {"role": "assistant", "content": "Open the Lisbon café in März — ünïcode kept."}], metadata={"team": "core"})
    fm.save_session("empty")
    fm.save_session("retro", conversation_history=[{"role": "user", "content": "retro notes"}])
    fm.add_summary("Talked about tea and the Lisbon café", "short_term", 3, {"by": "llm"})
    fm.add_summary("Planned the retro", "episodic", 2)
    fm.add_summary("Third summary: nothing of note", "short_term", 1)
    print(json.dumps({"sessions": fm.list_sessions(), "summaries": fm.get_summaries(limit=100)}))
"""

READ_BACK = """
    import json
    from praisonaiagents.memory.file_memory import FileMemory
    fm = FileMemory(user_id="alice")
    out = {"sessions": fm.list_sessions(), "summaries": fm.get_summaries(limit=100), "resumed": {}}
    for s in out["sessions"]:
        out["resumed"][s["name"]] = FileMemory(user_id="alice").resume_session(s["name"])
    try:
        fm.resume_session("standup")
        out["standup"] = "present"
    except FileNotFoundError:
        out["standup"] = "gone"
    out["short"] = [i.content for i in fm.get_short_term()]
    print(json.dumps(out))
"""


@pytest.fixture
def written(tmp_path, monkeypatch):
    """A project whose ./.praisonai/memory/alice/ the library wrote; what its own readers said right after."""
    project = tmp_path / "project"
    project.mkdir()
    said = last_json(run_library(WRITE, home=tmp_path / "h", cwd=project))
    monkeypatch.chdir(project)
    return project, said


def user_dir(project: Path) -> Path:
    return project / ".praisonai" / "memory" / "alice"


def files(root: Path) -> dict[str, bytes]:
    """Every regular file's bytes (praisonmem's writer lock left out: an empty sidecar writers may create)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".praisonmem.lock"}


def read_back(tmp_path: Path, project: Path) -> dict:
    return last_json(run_library(READ_BACK, home=tmp_path / "h", cwd=project))


def test_sessions_lists_what_list_sessions_lists_with_counts_and_sizes(cli, written):
    project, said = written
    rows = cli("memory", "sessions", "--user-id", "alice", "--json").json()
    assert [(r["name"], r["saved_at_iso"]) for r in rows] == [(s["name"], s["saved_at"]) for s in said["sessions"]]
    assert [r["short_term"] for r in rows] == [s["short_term_count"] for s in said["sessions"]]
    assert [r["messages"] > 0 for r in rows] == [s["has_conversation"] for s in said["sessions"]]
    by_name = {r["name"]: r for r in rows}
    assert (by_name["standup"]["messages"], by_name["retro"]["messages"], by_name["empty"]["messages"]) == (2, 1, 0)
    for row in rows:
        path = user_dir(project) / "sessions" / f"{row['name']}.json"
        doc = json.loads(path.read_bytes())
        assert (row["size"], row["saved_at"], row["path"]) == (path.stat().st_size, doc["saved_at"],
                                                              os.path.join(".praisonai", "memory", "alice",
                                                                           "sessions", f"{row['name']}.json"))
        assert row["unreadable"] is None and row["long_term_snapshot"] == 1 and row["entity_ids"] == 1
    table = cli("memory", "sessions", "--user-id", "alice")
    assert table.exit_code == 0 and table.stdout.splitlines()[0].split("\t") == [
        "NAME", "SAVED", "MESSAGES", "SHORT-TERM", "SIZE"]
    assert [line.split("\t")[0] for line in table.stdout.splitlines()[1:]] == [s["name"] for s in said["sessions"]]
    assert cli("memory", "sessions", "list", "--user-id", "alice", "--json").json() == rows


def test_show_prints_the_file_as_stored_and_the_conversation_as_a_transcript(cli, written, tmp_path):
    project, _ = written
    path = user_dir(project) / "sessions" / "standup.json"
    shown = cli("memory", "sessions", "show", "standup", "--user-id", "alice", "--json")
    assert shown.exit_code == 0 and shown.stdout == path.read_text(encoding="utf-8").rstrip("\n") + "\n"
    assert json.loads(shown.stdout) == read_back(tmp_path, project)["resumed"]["standup"]
    text = cli("memory", "sessions", "show", "standup", "--user-id", "alice").stdout
    assert "#0 user\nWhat did we decide about the café?\n" in text
    assert "#1 assistant\nOpen the Lisbon café in März — ünïcode kept.\n" in text
    assert "Messages       2\n" in text and "Metadata       team=core\n" in text
    empty = cli("memory", "sessions", "show", "empty", "--user-id", "alice").stdout
    assert empty.endswith("No conversation saved; short-term items:\n• Prefers green tea\n")


def test_delete_removes_that_file_only_and_the_library_reads_back_the_rest(cli, written, tmp_path):
    project, said = written
    before = files(project)
    library_before = read_back(tmp_path, project)
    dry = cli("memory", "sessions", "delete", "standup", "--user-id", "alice", "--dry-run")
    assert dry.exit_code == 0 and files(project) == before
    result = cli("memory", "sessions", "delete", "standup", "--user-id", "alice", "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    [change] = result.json()
    assert (change["action"], change["name"], change["messages"], change["dry_run"]) == ("deleted", "standup", 2, False)
    after = files(project)
    gone = os.path.join(".praisonai", "memory", "alice", "sessions", "standup.json")
    assert after == {k: v for k, v in before.items() if k != gone}
    library = read_back(tmp_path, project)
    assert library["standup"] == "gone"
    assert library["sessions"] == [s for s in library_before["sessions"] if s["name"] != "standup"]
    assert library["resumed"] == {k: v for k, v in library_before["resumed"].items() if k != "standup"}
    assert library["summaries"] == said["summaries"]
    assert refused(cli, project, "memory", "sessions", "delete", "standup", "--user-id", "alice", "--yes",
                   code=3) == ("praisonmem: error: no saved session 'standup' for user 'alice' "
                               f"({os.path.join('.praisonai', 'memory', 'alice', 'sessions', 'standup.json')})\n")


def test_delete_takes_the_temp_copy_a_killed_save_left_of_that_session_and_no_other(cli, written, monkeypatch):
    from praisonmem.core.io import jsonfile

    project, _ = written
    sessions = user_dir(project) / "sessions"
    mine = sessions / ".standup.json.abcd1234.tmp"  # tempfile.mkstemp's name for a save_session("standup")
    other = sessions / ".retro.json.abcd1234.tmp"
    for temp in (mine, other):
        temp.write_text('{"conversation_history": [{"content": "half-written text"', encoding="utf-8")
    monkeypatch.setattr(jsonfile, "LEFTOVER_AGE", 0.0)  # old enough: no save of it is under way
    [change] = cli("memory", "sessions", "delete", "standup", "--user-id", "alice", "--yes", "--json").json()
    assert change["removed_temps"] == [str(mine.relative_to(project))]
    assert not mine.exists() and other.exists() and (sessions / "retro.json").exists()


def test_summaries_list_search_and_delete_as_the_library_reads_them(cli, written, tmp_path):
    project, said = written
    stored = [{"type": "summary", "item": s} for s in reversed(said["summaries"])]  # get_summaries is newest first
    assert cli("memory", "list", "--type", "summary", "--user-id", "alice", "--json").json() == stored
    # the default stays FileMemory's four tiers: no summary among them
    assert "summary" not in {r["type"] for r in cli("memory", "list", "--user-id", "alice", "--json").json()}
    hits = cli("memory", "search", "lisbon café", "--type", "summary", "--user-id", "alice", "--json").json()
    assert [(h["type"], h["score"], h["item"]["summary"]) for h in hits] == [
        ("summary", 1.0, "Talked about tea and the Lisbon café")]
    mixed = cli("memory", "search", "tea", "--type", "summary", "--type", "short", "--user-id", "alice",
                "--json").json()
    # the library's own hit keeps its place among equal scores; a summary scores without importance
    assert [(h["type"], h["score"]) for h in mixed] == [("summary", 1.0), ("short_term", 0.5)]
    before = files(project)
    target = said["summaries"][1]  # the second newest
    result = cli("memory", "delete", target["id"], "--type", "summary", "--user-id", "alice", "--yes")
    assert (result.exit_code, result.stdout) == (0, f"deleted summary memory {target['id']}\n")
    library = read_back(tmp_path, project)
    assert library["summaries"] == [s for s in said["summaries"] if s["id"] != target["id"]]
    summaries = os.path.join(".praisonai", "memory", "alice", "summaries.json")
    after = files(project)
    # written as the library writes it: json.dump(indent=2, ensure_ascii=False), nothing else changed
    assert after[summaries] == json.dumps(list(reversed(library["summaries"])), indent=2,
                                          ensure_ascii=False).encode("utf-8")
    assert {k: v for k, v in after.items() if k != summaries} == {k: v for k, v in before.items() if k != summaries}
    # without --type summary, delete looks where delete_memory looks, which is not summaries.json
    assert refused(cli, project, "memory", "delete", said["summaries"][0]["id"], "--user-id", "alice", "--yes",
                   code=3).startswith(f"praisonmem: error: no memory '{said['summaries'][0]['id']}'")


@pytest.mark.parametrize("torn", ["sessions/standup.json", "summaries.json"])
def test_a_torn_file_is_refused_and_reported_and_nothing_changes(cli, written, torn):
    project, _ = written
    path = user_dir(project) / torn
    path.write_bytes(path.read_bytes()[:57])  # a write cut short
    if torn == "summaries.json":
        for args in (["memory", "list", "--type", "summary"], ["memory", "search", "x", "--type", "summary"],
                     ["memory", "delete", "0123456789abcdef", "--type", "summary", "--yes"]):
            line = refused(cli, project, *args, "--user-id", "alice", code=4)
            assert line.startswith(f"praisonmem: error: {os.path.join('.praisonai', 'memory', 'alice', torn)}: ")
    else:
        for args in (["show", "standup"], ["delete", "standup", "--yes"], ["delete", "standup", "--dry-run"]):
            line = refused(cli, project, "memory", "sessions", *args, "--user-id", "alice", code=4)
            assert line.startswith(f"praisonmem: error: {os.path.join('.praisonai', 'memory', 'alice', torn)}: ")
            assert line.endswith("; not changed\n")
        before = snapshot(project)
        listed = cli("memory", "sessions", "--user-id", "alice", "--json")
        assert listed.exit_code == 0 and snapshot(project) == before
        [bad] = [r for r in listed.json() if r["unreadable"]]
        assert bad["name"] == "standup" and bad["messages"] is None
        assert listed.stderr.startswith("praisonmem: warning: ") and listed.stderr.count("\n") == 1
    checked = cli("check", "--json")
    assert checked.exit_code == 1
    findings = checked.json()["findings"]
    [finding] = [f for f in findings if f["file"].endswith(torn)]
    assert (finding["code"], finding["severity"]) == ("parse", "error")
    assert finding["message"].endswith("FileMemory.resume_session reads it as an empty saved session"
                                       if torn.startswith("sessions/")
                                       else "FileMemory reads it as empty and overwrites it on its next write")


@pytest.mark.parametrize("name", [".", "..", "a/b", "a\\b", "   "])
def test_a_name_the_library_refuses_is_a_usage_error(cli, written, name):
    project, _ = written
    for args in (["show", name], ["delete", name, "--yes"]):
        assert refused(cli, project, "memory", "sessions", *args, "--user-id", "alice", code=2) == \
            f"praisonmem: error: invalid saved session name: {name!r}\n"


def test_a_user_without_memory_lists_nothing_and_creates_nothing(cli, written):
    project, _ = written
    before = snapshot(project)
    result = cli("memory", "sessions", "--user-id", "nobody", "--json")
    assert (result.exit_code, result.json()) == (0, []) and snapshot(project) == before
    assert refused(cli, project, "memory", "sessions", "show", "x", "--user-id", "nobody", code=3).startswith(
        "praisonmem: error: no saved session 'x' for user 'nobody'")


def test_a_link_in_sessions_is_not_followed(cli, written, tmp_path):
    project, _ = written
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"name": "secret", "conversation_history": []}), encoding="utf-8")
    (user_dir(project) / "sessions" / "linked.json").symlink_to(outside)
    for args in (["show", "linked"], ["delete", "linked", "--yes"]):
        line = refused(cli, project, "memory", "sessions", *args, "--user-id", "alice", code=4)
        assert line.endswith("linked.json: a symbolic link, not a saved session file; not followed\n")
    assert outside.exists()


def test_backup_holds_saved_sessions_and_summaries_and_restores_them_for_the_library(cli, written, tmp_path):
    project, said = written
    result = cli("backup", "create", "-o", tmp_path / "out", "--include", "memory", "--json")
    assert result.exit_code == 0, result.stderr
    with tarfile.open(result.json()["path"]) as tar:
        names = set(tar.getnames())
        for name in ("memory/alice/sessions/standup.json", "memory/alice/sessions/empty.json",
                     "memory/alice/summaries.json"):
            assert name in names
            assert tar.extractfile(name).read() == (user_dir(project) / name.removeprefix("memory/alice/")).read_bytes()
    restored = tmp_path / "restored"
    out = cli("backup", "restore", result.json()["path"], "--to", restored, "--yes")
    assert out.exit_code == 0, out.stderr
    back = restored / "memory" / "alice"
    assert files(back) == {k.removeprefix(os.path.join(".praisonai", "memory", "alice") + os.sep): v
                           for k, v in files(project).items()}


def test_check_secrets_scans_summaries_and_saved_sessions(cli, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    run_library("""
        from praisonaiagents.memory.file_memory import FileMemory
        fm = FileMemory(user_id="alice")
        fm.save_session("leaky", conversation_history=[
            {"role": "user", "content": "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}])
        fm.add_summary("The user pasted AKIAABCDEFGHIJKLMNOP", "short_term", 1)
    """, home=tmp_path / "h", cwd=project)
    monkeypatch.chdir(project)
    result = cli("check", "--secrets", "--json")
    assert result.exit_code == 1
    report = result.json()
    found = sorted((f["record"], f["field"], f["kind"]) for f in report["findings"])
    assert found == [("alice/sessions/leaky", "conversation_history[0].content", "openai_api_key"),
                     ("alice/summaries", "[0].summary", "aws_access_key_id")]
    assert report["scanned"]["memory_saved_sessions"] == 1
    cli("memory", "sessions", "delete", "leaky", "--user-id", "alice", "--yes")
    again = cli("check", "--secrets", "--json").json()
    assert [f["record"] for f in again["findings"]] == ["alice/summaries"]


def test_control_characters_in_a_saved_session_reach_no_terminal(cli, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    run_library("""
        from praisonaiagents.memory.file_memory import FileMemory
        fm = FileMemory(user_id="alice")
        fm.save_session("evil\\x1b]0;owned\\x07", conversation_history=[
            {"role": "user\\x1b[2J", "content": "line one\\n\\x1b[31mred\\x1b[0m"}])
        fm.add_summary("sum\\x1b[5mmary", "short_term", 1)
    """, home=tmp_path / "h", cwd=project)
    monkeypatch.chdir(project)
    name = "evil\x1b]0;owned\x07"
    listed = cli("memory", "sessions", "--user-id", "alice")
    shown = cli("memory", "sessions", "show", name, "--user-id", "alice")
    summaries = cli("memory", "list", "--type", "summary", "--user-id", "alice")
    for result in (listed, shown, summaries):
        assert result.exit_code == 0 and "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "line one\n" in shown.stdout  # a body keeps its newlines
    assert json.loads(cli("memory", "sessions", "show", name, "--user-id", "alice", "--json").stdout)[
        "conversation_history"][0]["content"] == "line one\n\x1b[31mred\x1b[0m"
    deleted = cli("memory", "sessions", "delete", name, "--user-id", "alice", "--yes")
    assert deleted.exit_code == 0 and "\x1b" not in deleted.stdout + deleted.stderr
    assert not (user_dir(project) / "sessions" / f"{name}.json").exists()


def test_summaries_that_are_not_objects_are_listed_as_stored_and_never_matched(cli, written):
    project, said = written
    path = user_dir(project) / "summaries.json"
    stored = json.loads(path.read_bytes()) + ["a bare string", 7]
    path.write_text(json.dumps(stored, indent=2, ensure_ascii=False), encoding="utf-8")
    rows = cli("memory", "list", "--type", "summary", "--user-id", "alice", "--json").json()
    assert [r["item"] for r in rows] == stored
    table = cli("memory", "list", "--type", "summary", "--user-id", "alice")
    assert table.exit_code == 0 and table.stdout.splitlines()[-2:] == ['summary\t\t\t\t"a bare string"',
                                                                       "summary\t\t\t\t7"]
    assert [h["item"] for h in cli("memory", "search", "bare", "--type", "summary", "--user-id", "alice",
                                   "--json").json()] == []


def test_reads_change_nothing_not_even_a_lock_file(cli, written):
    project, _ = written
    before = snapshot(project)
    for args in (["memory", "sessions"], ["memory", "sessions", "--json"], ["memory", "sessions", "show", "standup"],
                 ["memory", "sessions", "show", "retro", "--json"], ["memory", "sessions", "delete", "retro",
                                                                      "--dry-run"],
                 ["memory", "list", "--type", "summary"], ["memory", "search", "tea", "--type", "summary"],
                 ["memory", "delete", "nope", "--type", "summary", "--dry-run"], ["check"], ["check", "--secrets"]):
        result = cli(*args, "--user-id", "alice") if args[0] == "memory" else cli(*args)
        assert result.exit_code in (0, 3), (args, result.stderr)
    assert snapshot(project) == before


def test_delete_waits_for_another_praisonmem_writer_then_gives_up_and_keeps_the_file(cli, written):
    from tests.helpers import hold_flock

    project, _ = written
    lock = user_dir(project) / ".praisonmem.lock"
    holder = hold_flock(lock, 30)
    try:
        before = files(project)
        result = cli("--lock-timeout", "0.3", "memory", "sessions", "delete", "standup", "--user-id", "alice", "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (4, "", 1), result.stderr
    assert files(project) == before
    assert cli("memory", "sessions", "delete", "standup", "--user-id", "alice", "--yes").exit_code == 0
