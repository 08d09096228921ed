"""praisonmem migrate on copies of the era fixtures: every fix listed, each made in its own
lock or transaction, one change per fix; check reports the same findings with the command that fixes each."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from praisonmem.core.sessions import history_id
from tests.eras import ERA_ROOT, era_full_home, era_workspace
from tests.helpers import (ERAS, MD5_CAFE, MD5_LEGACY_BOT, MD5_UNNAMED, SHA_CAFE, SHA_LEGACY_BOT, SHA_UNNAMED, hold_flock,
                           refused, snapshot)

WORKSPACE = f"git:{ERA_ROOT}"
AGENTS = {"Café ✓ 日本": (MD5_CAFE, SHA_CAFE), "Legacy Bot": (MD5_LEGACY_BOT, SHA_LEGACY_BOT),
          "agent": (MD5_UNNAMED, SHA_UNNAMED)}  # each agent's md5-era (older) and sha256-era files
KINDS = ["history.name_only"] * 3 + ["episodic.raw_date", "sqlite_memory.shared", "sqlite_memory.shared"]


@pytest.fixture(params=["1.5.122", "1.6.157"])
def era(request, tmp_path, monkeypatch):
    """A home that met both eras and a workspace (cwd) written by one release."""
    home = era_full_home(tmp_path, "1.5.122", "1.6.157")
    repo = era_workspace(tmp_path, request.param)
    monkeypatch.chdir(repo)
    return home, repo


def trees(home: Path, repo: Path) -> tuple[dict, dict]:
    return snapshot(home), snapshot(repo)


def expected_subjects(home: Path) -> list[str]:
    """What each fix is about: an agent's first legacy file by name, then the memory files."""
    return [str(home / "sessions" / f"{min(files)}.json") for files in AGENTS.values()] + [
        ".praisonai/memory/alice/episodic/2026-3-5.json", ".praisonai/short_term.db", ".praisonai/long_term.db"]


def moved(home: Path, name: str) -> str:
    """An agent's legacy files, oldest first, and the workspace history they become."""
    sessions = home / "sessions"
    return (" and ".join(str(sessions / f"{f}.json") for f in sorted(AGENTS[name])) +
            f" → {sessions / (history_id(WORKSPACE, name) + '.json')}")


def test_dry_run_lists_every_fix_and_changes_nothing(cli, era):
    home, repo = era
    before = trees(home, repo)
    result = cli("--home", home, "migrate", "--dry-run", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    fixes = result.json()
    assert [f["kind"] for f in fixes] == KINDS
    assert [f["subject"] for f in fixes] == expected_subjects(home)
    assert [f["action"] for f in fixes] == ["adopt-moved"] * 3 + ["merged", "copied", "copied"]
    assert {f["dry_run"] for f in fixes} == {True}
    assert [f["fix_command"] for f in fixes] == [
        f"praisonmem --home {home} session adopt 'Café ✓ 日本'", f"praisonmem --home {home} session adopt 'Legacy Bot'",
        f"praisonmem --home {home} session adopt agent"] + [f"praisonmem --home {home} migrate"] * 3
    for fix, (name, (md5, sha)) in zip(fixes, AGENTS.items()):
        target = history_id(WORKSPACE, name)
        assert [(c["session_id"], c["new_session_id"]) for c in fix["changes"]] == [(md5, target), (sha, target)]
        assert f"adopting makes it {target}.json, its history in this workspace, {WORKSPACE}" in fix["detail"]
    episodic = fixes[3]
    assert episodic["changes"] == [{
        "action": "merged", "user_id": "alice", "date": "2026-03-05",
        "file": ".praisonai/memory/alice/episodic/2026-03-05.json",
        "merged": [".praisonai/memory/alice/episodic/2026-3-5.json"], "entries": 1, "already": 0, "dry_run": True,
        "detail": "1 entry"}]
    assert [(c["changes"][0]["source"], c["changes"][0]["file"], c["changes"][0]["rows"]) for c in fixes[4:]] == [
        (".praisonai/short_term.db", ".praisonai/short_term_alice.db", 1),
        (".praisonai/long_term.db", ".praisonai/long_term_alice.db", 1)]
    human = cli("--home", home, "migrate", "--dry-run")
    lines = human.stdout.splitlines()
    assert human.exit_code == 0 and len(lines) == 6
    assert [line.split(" [", 1)[0] for line in lines] == [
        f"would move {moved(home, name)}" for name in AGENTS] + [
        f"would merge {expected_subjects(home)[3]}", f"would copy {expected_subjects(home)[4]}",
        f"would copy {expected_subjects(home)[5]}"]
    assert trees(home, repo) == before


def test_migrate_asks_first_and_needs_yes_off_a_terminal(cli, era):
    home, repo = era
    line = refused(cli, home, "--home", home, "migrate", code=4)
    assert line == ("praisonmem: error: apply 6 migration fixes (--dry-run lists them): not confirmed, nothing "
                    "changed (pass --yes in a non-interactive run, or --dry-run to see what would change)\n")


def test_migrate_yes_makes_every_fix_once(cli, era):
    home, repo = era
    legacy = {n: [json.loads((home / "sessions" / f"{f}.json").read_text("utf-8")) for f in fs]
              for n, fs in AGENTS.items()}
    shared = {name: (repo / ".praisonai" / name).read_bytes() for name in ("short_term.db", "long_term.db")}
    raw = json.loads((repo / ".praisonai/memory/alice/episodic/2026-3-5.json").read_text("utf-8"))
    result = cli("--home", home, "migrate", "--yes", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert [(c["kind"], c["action"], c["dry_run"]) for c in result.json()] == list(zip(
        KINDS, ["adopt-moved"] * 3 + ["merged", "copied", "copied"], [False] * 6))
    for name, files in AGENTS.items():
        target = home / "sessions" / f"{history_id(WORKSPACE, name)}.json"
        adopted = json.loads(target.read_text("utf-8"))
        contents = sorted(m["content"] for m in adopted["messages"] + adopted.get("archived_messages", []))
        assert contents == sorted(m["content"] for doc in legacy[name] for m in doc["messages"]
                                  + doc.get("archived_messages", []))
        assert not any((home / "sessions" / f"{f}.json").exists() for f in files)
    episodic = repo / ".praisonai/memory/alice/episodic"
    assert json.loads((episodic / "2026-03-05.json").read_text("utf-8")) == raw
    assert not (episodic / "2026-3-5.json").exists()
    assert (episodic / "2026-03-05.json").stat().st_mode & 0o777 == 0o600
    for tier, text in (("short_term", "User likes green tea"), ("long_term", "User works at Acme")):
        own = repo / ".praisonai" / f"{tier}_alice.db"
        assert own.stat().st_mode & 0o777 == 0o600
        rows = sqlite3.connect(own).execute(f"SELECT content, metadata FROM {tier}_memory").fetchall()
        assert rows == [(text, '{"user_id": "alice"}')]
        assert (repo / ".praisonai" / f"{tier}.db").read_bytes() == shared[f"{tier}.db"]  # never changed
    again = cli("--home", home, "migrate", "--dry-run", "--json")
    assert (again.exit_code, again.json()) == (0, [])
    assert again.stderr == (f"praisonmem: nothing to migrate in {home} or .praisonai: praisonaiagents 1.7.17 loads "
                            "everything there\n")
    report = cli("--home", home, "check", "--json").json()
    assert [f for f in report["findings"] if f["fix"]] == []


def test_migrate_yes_says_what_moved_where(cli, era):
    home, repo = era
    result = cli("--home", home, "migrate", "--yes")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = [line.split(" [", 1)[0] for line in result.stdout.splitlines()]
    assert lines[:3] == [f"moved {moved(home, name)}" for name in AGENTS]
    assert lines[3:] == [f"merged {expected_subjects(home)[3]}", f"copied {expected_subjects(home)[4]}",
                         f"copied {expected_subjects(home)[5]}"]


def test_migrate_warns_when_another_workspace_of_the_home_may_use_the_history_it_moves(cli, era):
    """1.6.157 and before, every project of a home shared an agent's name-only history; an agent that has a
    workspace history of another project too ran there, so moving the shared file here takes it from there."""
    home, repo = era
    other = history_id("dir:/srv/other-project", "Legacy Bot")
    doc = {"session_id": other, "agent_name": "Legacy Bot", "messages": [], "created_at": "2026-01-01T00:00:00",
           "updated_at": "2026-01-01T00:00:00"}
    (home / "sessions" / f"{other}.json").write_text(json.dumps(doc), encoding="utf-8")
    before = trees(home, repo)
    warning = (f"praisonmem: warning: agent 'Legacy Bot' also ran in another workspace of this home ({other}.json), "
               f"which may use its name-only history {min(AGENTS['Legacy Bot'])}.json too: moving it here takes it "
               f"from there; to copy it instead: praisonmem --home {home} session adopt 'Legacy Bot' --copy\n")
    dry = cli("--home", home, "migrate", "--dry-run")
    assert (dry.exit_code, dry.stderr) == (0, warning)  # one warning: the other agents ran nowhere else
    assert trees(home, repo) == before
    refused = cli("--home", home, "migrate")  # said before the question, so a person sees it before agreeing
    assert refused.exit_code == 4 and refused.stderr.startswith(warning)
    done = cli("--home", home, "migrate", "--yes", "--json")
    assert done.exit_code == 0 and done.stderr == warning
    assert (home / "sessions" / f"{other}.json").exists()  # the other workspace's own history is not touched


def test_check_reports_each_finding_with_the_command_that_fixes_it(cli, era):
    home, repo = era
    fixes = cli("--home", home, "migrate", "--dry-run", "--json").json()
    before = trees(home, repo)
    report = cli("--home", home, "check", "--json").json()
    found = [(f["code"], f["file"], f["fix"], f["severity"]) for f in report["findings"] if f["fix"]]
    assert found == [(f["kind"], f["subject"], f["fix_command"], "warning") for f in fixes]
    assert [f["message"] for f in report["findings"] if f["fix"]] == [f["detail"] for f in fixes]
    human = cli("--home", home, "check").stdout
    assert (f"warning  {home / 'sessions' / (SHA_LEGACY_BOT + '.json')}\n         agent 'Legacy Bot': history named "
            "by the agent's name alone") in human
    assert f"\n         fix: praisonmem --home {home} session adopt 'Legacy Bot'\n" in human
    assert trees(home, repo) == before


def test_check_of_a_path_names_that_path_in_its_fix(cli, era, tmp_path, monkeypatch):
    home, repo = era
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.chdir(tmp_path)  # neither is what a command here would use
    report = cli("check", home, repo / ".praisonai" / "memory", "--json").json()
    fixes = sorted({f["fix"] for f in report["findings"] if f["fix"]})
    assert fixes == [f"praisonmem --home {home} session adopt 'Café ✓ 日本'",
                     f"praisonmem --home {home} session adopt 'Legacy Bot'",
                     f"praisonmem --home {home} session adopt agent",
                     f"praisonmem --memory-dir {repo / '.praisonai' / 'memory'} migrate"]


def test_a_fix_that_fails_leaves_the_others_to_run(cli, era):
    home, repo = era
    raw = repo / ".praisonai/memory/alice/episodic/2026-3-5.json"
    raw.write_text('[{"id": "x", "content": "half', encoding="utf-8")
    target = home / "sessions" / f"{history_id(WORKSPACE, 'Legacy Bot')}.json"
    holder = hold_flock(Path(f"{target}.lock"), 30)
    try:
        result = cli("--home", home, "--lock-timeout", "0.2", "migrate", "--yes", "--json")
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 1
    actions = [(c["kind"], c["action"]) for c in result.json()]
    assert actions == [("history.name_only", "adopt-moved"), ("history.name_only", "failed"),
                       ("history.name_only", "adopt-moved"), ("episodic.raw_date", "failed"),
                       ("sqlite_memory.shared", "copied"), ("sqlite_memory.shared", "copied")]
    failures = [line for line in result.stderr.splitlines()]
    assert len(failures) == 2 and all(line.startswith("praisonmem: error: failed ") for line in failures)
    assert "could not lock" in failures[0] and "invalid JSON" in failures[1]
    errors = [c["error"] for c in result.json() if c["action"] == "failed"]
    assert "could not lock" in errors[0] and "invalid JSON" in errors[1]
    assert {c["error"] for c in result.json() if c["action"] != "failed"} == {None}
    assert raw.read_text(encoding="utf-8") == '[{"id": "x", "content": "half'  # never rewritten
    assert (home / "sessions" / f"{SHA_LEGACY_BOT}.json").exists() and not target.exists()
    rerun = cli("--home", home, "migrate", "--dry-run", "--json").json()
    assert [c["kind"] for c in rerun] == ["history.name_only", "episodic.raw_date"]


def test_a_merge_keeps_entries_already_there_once_and_both_of_a_clashing_id(cli, era):
    home, repo = era
    episodic = repo / ".praisonai/memory/alice/episodic"
    raw = json.loads((episodic / "2026-3-5.json").read_text("utf-8"))
    clash = {**raw[0], "content": "same id, other text"}
    (episodic / "2026-03-05.json").write_text(json.dumps([raw[0]], indent=2), encoding="utf-8")
    (episodic / "2026-03-5.json").write_text(json.dumps([clash], indent=2), encoding="utf-8")
    result = cli("--home", home, "migrate", "--yes", "--json")
    fix = next(c for c in result.json() if c["kind"] == "episodic.raw_date")
    assert fix["changes"][0]["merged"] == [".praisonai/memory/alice/episodic/2026-03-5.json",
                                           ".praisonai/memory/alice/episodic/2026-3-5.json"]
    assert (fix["changes"][0]["entries"], fix["changes"][0]["already"]) == (2, 1)
    assert json.loads((episodic / "2026-03-05.json").read_text("utf-8")) == [raw[0], clash]
    assert sorted(p.name for p in episodic.iterdir()) == ["2026-03-05.json", "2026-12-01.json"]


def test_an_interrupted_merge_is_finished_by_the_rerun(cli, era):
    home, repo = era
    episodic = repo / ".praisonai/memory/alice/episodic"
    raw_bytes = (episodic / "2026-3-5.json").read_bytes()
    (episodic / "2026-03-05.json").write_bytes(raw_bytes)  # written, then killed before the raw file went
    result = cli("--home", home, "migrate", "--yes", "--json")
    fix = next(c for c in result.json() if c["kind"] == "episodic.raw_date")
    assert (fix["action"], fix["changes"][0]["already"]) == ("merged", 1)
    assert (episodic / "2026-03-05.json").read_bytes() == raw_bytes and not (episodic / "2026-3-5.json").exists()


def test_a_user_with_rows_in_both_files_gets_only_the_missing_ones(cli, era):
    home, repo = era
    own = repo / ".praisonai" / "short_term_alice.db"
    assert cli("memory", "store", "written by 1.7.17", "--provider", "sqlite", "--user-id", "alice").exit_code == 0
    result = cli("--home", home, "migrate", "--yes", "--json")
    assert result.exit_code == 0
    rows = sqlite3.connect(own).execute("SELECT content FROM short_term_memory ORDER BY id").fetchall()
    assert rows == [("written by 1.7.17",), ("User likes green tea",)]
    assert [c["kind"] for c in cli("--home", home, "migrate", "--dry-run", "--json").json()] == []


def test_check_and_a_dry_run_change_nothing_in_a_gateway_home_with_a_dead_writers_wal(cli, gateway_home, tmp_path,
                                                                                      monkeypatch):
    from tests.sqlitestate import crashed_wal

    crashed_wal(gateway_home.db, "UPDATE sessions SET agent_name = 'x' WHERE session_id = 'gw-1'")
    for era_ in ("1.5.122", "1.6.157"):  # name-only history beside the gateway's stores
        for path in (ERAS / era_ / "home" / "sessions").glob("history_*.json"):
            (gateway_home.sessions / path.name).write_bytes(path.read_bytes())
    repo = era_workspace(tmp_path, "1.5.122")  # its databases are WAL files without sidecars
    monkeypatch.chdir(repo)
    before = trees(gateway_home.home, repo)
    fixes = cli("--home", gateway_home.home, "migrate", "--dry-run", "--json")
    # and the JSON sessions it never imported, and the dead writer's -wal (older page versions of gw-1's row)
    gateway_kinds = KINDS[:3] + ["sessions_db.missing_json", "sessions_db.residue"] + KINDS[3:]
    assert fixes.exit_code == 0 and [f["kind"] for f in fixes.json()] == gateway_kinds
    report = cli("--home", gateway_home.home, "check", "--json")
    assert report.exit_code in (0, 1) and len([f for f in report.json()["findings"] if f["fix"]]) == 8
    assert trees(gateway_home.home, repo) == before


def test_a_shared_database_that_does_not_open_is_a_failed_fix_not_a_silent_one(cli, era):
    home, repo = era
    shared = repo / ".praisonai" / "short_term.db"
    shared.write_bytes(b"not a database, but named like one " * 200)
    before = shared.read_bytes()
    result = cli("--home", home, "migrate", "--yes", "--json")
    assert result.exit_code == 1
    outcome = [(c["kind"], c["subject"], c["action"]) for c in result.json() if c["kind"] == "sqlite_memory.shared"]
    assert outcome == [("sqlite_memory.shared", ".praisonai/short_term.db", "failed"),
                       ("sqlite_memory.shared", ".praisonai/long_term.db", "copied")]  # the other file is split
    failed = next(c for c in result.json() if c["action"] == "failed")
    assert failed["detail"].startswith("shared SQLite memory (praisonaiagents 1.7.0 and before) that cannot be read")
    assert failed["error"].startswith(".praisonai/short_term.db: ") and failed["changes"] == []
    assert shared.read_bytes() == before
    report = cli("--home", home, "check", "--json").json()
    assert [(f["code"], f["file"], f["fix"]) for f in report["findings"] if f["code"] == "sqlite_memory.shared"] == [
        ("sqlite_memory.shared", ".praisonai/short_term.db", None)]


def test_a_copy_killed_while_creating_the_users_file_is_rolled_back_and_finished(cli, era):
    """A split killed while it created short_term_alice.db leaves a hot journal: the dry run lists the fix (reading
    what the rollback will leave, changing nothing), the run lets SQLite roll it back and copies the rows."""
    from tests.sqlitestate import killed_mid_write

    home, repo = era
    memory = repo / ".praisonai"
    target = memory / "short_term_alice.db"
    insert = "INSERT INTO short_term_memory (content) VALUES ('half-copied " + "x" * 3000 + "');"
    killed_mid_write(target, "CREATE TABLE IF NOT EXISTS short_term_memory (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                             "content TEXT NOT NULL, metadata TEXT, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP);"
                     + insert * 30)
    before = trees(home, repo)
    listed = cli("--home", home, "migrate", "--dry-run", "--json")
    assert listed.exit_code == 0, listed.stderr
    [split] = [f for f in listed.json() if f["subject"] == ".praisonai/short_term.db"]
    assert split["detail"].endswith("copied into short_term_alice.db, the user's own file (the shared file is kept "
                                    "as it is); an earlier copy was killed mid-write and left "
                                    "short_term_alice.db-journal: SQLite rolls that write back first")
    assert (split["action"], split["changes"][0]["rows"]) == ("copied", 1)
    assert trees(home, repo) == before
    done = cli("--home", home, "migrate", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    assert not Path(f"{target}-journal").exists()
    shared = sqlite3.connect(f"file:{memory / 'short_term.db'}?mode=ro", uri=True)
    own = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    try:
        alice = [r for r in shared.execute("SELECT content, metadata, timestamp FROM short_term_memory")
                 if '"user_id": "alice"' in (r[1] or "")]
        assert own.execute("SELECT content, metadata, timestamp FROM short_term_memory").fetchall() == alice
        assert len(alice) == 1
    finally:
        shared.close()
        own.close()
    again = cli("--home", home, "migrate", "--yes")
    assert again.exit_code == 0 and "nothing to migrate" in again.stderr
