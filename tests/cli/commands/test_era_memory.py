"""Memory written by older praisonaiagents releases: the shared SQLite files of ≤1.7.0, user
directories named by raw ids before 1.6.58, and learn timestamps without a zone before 1.7.17."""

from __future__ import annotations

import json
import time

import pytest

from tests.eras import era_full_home, era_workspace, legacy_user_dirs
from tests.helpers import refused, snapshot

ERA_STAMP = {"1.5.122": "2026-12-01 07:22:50", "1.6.157": "2026-12-01 07:22:53"}


def shared_note(user: str) -> str:
    return (f"praisonmem: user '{user}' has no short_term_{user}.db or long_term_{user}.db: reading this user's rows "
            "in the shared short_term.db and long_term.db (the layout of praisonaiagents 1.7.0 and before), which "
            "1.7.17 does not read for a named user; 'praisonmem migrate' copies them into the per-user files\n")


# ---------------------------------------------------------------- SQLite memory without a user suffix


@pytest.mark.parametrize("era", ["1.5.122", "1.6.157"])
def test_sqlite_reads_the_shared_files_of_older_releases_for_a_user_without_files_and_says_so(
        cli, tmp_path, monkeypatch, era):
    repo = era_workspace(tmp_path, era)
    monkeypatch.chdir(repo)
    before = snapshot(repo)
    listed = cli("memory", "list", "--provider", "sqlite", "--user-id", "alice", "--json")
    assert (listed.exit_code, listed.stderr) == (0, shared_note("alice"))
    assert listed.json() == [
        {"type": "short_term", "item": {"id": "1", "text": "User likes green tea", "metadata": {"user_id": "alice"},
                                        "timestamp": ERA_STAMP[era]}},
        {"type": "long_term", "item": {"id": "1", "text": "User works at Acme", "metadata": {"user_id": "alice"},
                                       "timestamp": ERA_STAMP[era]}}]
    found = cli("memory", "search", "green tea", "--provider", "sqlite", "--user-id", "alice", "--json")
    assert (found.exit_code, found.stderr) == (0, shared_note("alice"))
    assert [h["item"]["text"] for h in found.json()] == ["User likes green tea"]
    other = cli("memory", "search", "tea", "--provider", "sqlite", "--user-id", "bob", "--json")
    assert (other.exit_code, other.json(), other.stderr) == (0, [], shared_note("bob"))  # alice's rows stay hers
    assert snapshot(repo) == before  # no -wal/-shm beside the 1.5.122 WAL files, nothing else either


def test_a_user_with_its_own_file_is_read_from_it_alone(cli, tmp_path, monkeypatch):
    repo = era_workspace(tmp_path, "1.6.157")
    monkeypatch.chdir(repo)
    stored = cli("memory", "store", "User likes coffee", "--provider", "sqlite", "--user-id", "alice")
    assert stored.exit_code == 0 and stored.stdout == "1\n"
    assert stored.stderr == ("praisonmem: stored in short_term_alice.db, the file praisonaiagents 1.7.17 reads; this "
                             "user's rows in the shared files are no longer read for this user (by praisonmem or "
                             "1.7.17) until 'praisonmem migrate' copies them there\n")
    listed = cli("memory", "list", "--provider", "sqlite", "--user-id", "alice", "--json")
    assert (listed.stderr, [r["item"]["text"] for r in listed.json()]) == ("", ["User likes coffee"])


def test_delete_and_reset_refuse_rows_in_the_shared_files(cli, tmp_path, monkeypatch):
    repo = era_workspace(tmp_path, "1.6.157")
    monkeypatch.chdir(repo)
    line = refused(cli, repo, "memory", "delete", "1", "--type", "short", "--provider", "sqlite", "--user-id",
                   "alice", "--yes", code=4)
    assert line == ("praisonmem: error: user 'alice' has rows only in the shared short_term.db and long_term.db "
                    "(praisonaiagents 1.7.0 and before), where other users' rows live too; run 'praisonmem migrate' "
                    "to copy them into the per-user files first; nothing deleted\n")
    line = refused(cli, repo, "memory", "reset", "--all", "--provider", "sqlite", "--user-id", "alice", "--yes",
                   code=4)
    assert line.endswith("per-user files first; nothing reset\n")


# ---------------------------------------------------------------- FileMemory user directories from before 1.6.58


def test_memory_users_lists_raw_user_dirs_by_their_real_names_with_their_own_counts(cli, tmp_path, monkeypatch):
    repo = era_workspace(tmp_path, "1.6.157")
    monkeypatch.chdir(repo)
    memory_dir = repo / ".praisonai" / "memory"
    legacy_user_dirs(memory_dir)
    (memory_dir / "alice" / "short_term.json").write_text("[]")  # the stripped id's own directory differs
    before = snapshot(repo)
    result = cli("memory", "users", "--json")
    rows = {r["user_id"]: r for r in result.json()}
    assert sorted(rows) == [" alice ", "alice", "bob", "carol", "default", "team/alice"]
    counts = {u: (rows[u]["short_term"], rows[u]["long_term"], rows[u]["entities"], rows[u]["episodic"])
              for u in (" alice ", "alice", "team/alice")}
    assert counts == {" alice ": (2, 1, 1, 2), "alice": (0, 1, 1, 2), "team/alice": (2, 1, 1, 2)}
    assert rows[" alice "]["path"] == ".praisonai/memory/ alice "  # relative, as the memory dir is
    assert rows["team/alice"]["path"] == ".praisonai/memory/team/alice"
    assert rows[" alice "]["legacy"] == ("user directory ' alice ' is a raw user id from before praisonaiagents "
                                         "1.6.58; 1.7.17 strips ids, so FileMemory(user_id=' alice ') reads 'alice', "
                                         "not this directory")
    assert rows["team/alice"]["legacy"] == ("user directory 'team/alice' is a raw user id from before praisonaiagents "
                                            "1.6.58; 1.7.17 refuses ids with '/', '\\' or '..', so no FileMemory "
                                            "reads this directory")
    assert rows["alice"]["legacy"] is None
    assert result.stderr == "".join(f"praisonmem: warning: {rows[u]['legacy']}\n" for u in (" alice ", "team/alice"))
    human = cli("memory", "users").stdout.splitlines()
    assert human[1:3] == ['" alice "\t2\t1\t1\t2\t1', "alice\t0\t1\t1\t2\t1"] and "team/alice\t2\t1\t1\t2\t1" in human
    assert snapshot(repo) == before


def test_check_flags_raw_user_dirs(cli, tmp_path, monkeypatch):
    repo = era_workspace(tmp_path, "1.6.157")
    memory_dir = repo / ".praisonai" / "memory"
    legacy_user_dirs(memory_dir)
    before = snapshot(repo)
    report = cli("check", memory_dir, "--json").json()
    flagged = [(f["file"], f["severity"]) for f in report["findings"] if f["code"] == "memory.legacy_user_dir"]
    assert flagged == [(str(memory_dir / " alice "), "warning"), (str(memory_dir / "team" / "alice"), "warning")]
    # each copy holds a raw-date episodic file, as alice/ does; only alice's is a migrate finding: 1.7.17 reads
    # nothing in the raw-id directories, whatever their files are named (the directory is the finding)
    raw_dates = [f["file"] for f in report["findings"] if f["file"].endswith("2026-3-5.json")]
    assert raw_dates == [str(memory_dir / "alice" / "episodic" / "2026-3-5.json")]
    assert snapshot(repo) == before


# ---------------------------------------------------------------- learn timestamps without a zone


@pytest.fixture
def new_york(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def test_learn_times_without_a_zone_are_utc(cli, tmp_path, new_york):
    home = era_full_home(tmp_path, "1.5.122")
    table = cli("--home", home, "learn", "list", "--store", "persona").stdout.splitlines()
    # updated_at "2026-12-01T07:23:11.758093", written with utcnow(): 02:23 in New York (UTC-5)
    assert table[1].split("\t")[:5] == ["persona", "private", "alice", "persona_0_1796109770.594688",
                                        "2026-12-01 02:23:11"]
    listed = cli("--home", home, "learn", "list", "--store", "persona", "--json").json()
    assert listed[0]["updated_at"] == "2026-12-01T07:23:11.758093"  # JSON keeps what is stored


def test_learn_list_orders_naive_utc_and_zoned_times_as_one_clock(cli, tmp_path):
    home = era_full_home(tmp_path, "1.6.157")
    path = home / "learn" / "private" / "alice" / "insights.json"
    store = json.loads(path.read_text(encoding="utf-8"))
    old = next(iter(store.values()))
    # 09:00 UTC (naive, as 1.6.157 wrote it) is later than 10:00+02:00 (08:00 UTC): a text sort says otherwise
    store = {"a": {**old, "id": "a", "content": "naive", "updated_at": "2026-12-01T09:00:00"},
             "b": {**old, "id": "b", "content": "zoned", "updated_at": "2026-12-01T10:00:00+02:00"}}
    path.write_text(json.dumps(store, indent=2), encoding="utf-8")
    rows = cli("--home", home, "learn", "list", "--store", "insights", "--json").json()
    assert [r["content"] for r in rows] == ["naive", "zoned"]
