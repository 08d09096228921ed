"""Backups of every store in a gateway home: sessions.db and sessions_index.db as snapshots
taken with SQLite's online backup API from a source opened so that no file changes, the praisonai CLI's stores
(projects/<id>/, unified files, .last_session, run_*/); verify runs quick_check on each database; restore puts
them back atomically, 0600, and never over a database another process has open."""

from __future__ import annotations

import json
import sqlite3
import tarfile
from pathlib import Path

import pytest

from tests.cli.commands.test_backup_hostile import crafted, manifest_entry
from tests.helpers import snapshot
from tests.realhomes import PROJECT_ID
from tests.sqlitestate import crashed_wal, live_wal, shm_lock_holder

RUN = "run_20261128_110000_ec9910"
STORE_FILES = sorted([
    ".last_session", "bot_slack_7.json", "bot_telegram_42.json", "db5b5fab.json", "enc-1.json", "gw-legacy.json",
    "sessions.db", "sessions_index.db", "tui0001a.json", "tui0002b.json", f"projects/{PROJECT_ID}/proj-sess-1.json",
    f"projects/{PROJECT_ID}/sessions_index.db", f"{RUN}/events.jsonl", f"{RUN}/metadata.json"])


def backup(cli, gw, tmp_path, *extra) -> Path:
    result = cli("--home", gw.home, "--memory-dir", tmp_path / "nomemory", "backup", "create", "--include",
                 "sessions", "-o", tmp_path / "backups", "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return Path(result.json()["path"])


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def rows(db: Path, sql: str = "SELECT session_id, data FROM sessions ORDER BY session_id") -> list:
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_backup_holds_every_store_and_changes_nothing_in_the_home(cli, gateway_home, tmp_path):
    before = snapshot(gateway_home.home)
    archive = backup(cli, gateway_home, tmp_path)
    assert snapshot(gateway_home.home) == before  # no -wal/-shm beside the idle WAL databases, nothing else
    files = members(archive)
    manifest = json.loads(files.pop("manifest.json"))
    assert sorted(n.removeprefix("home/sessions/") for n in files) == STORE_FILES
    databases = {e["path"] for e in manifest["files"] if e.get("sqlite")}
    assert databases == {"home/sessions/sessions.db", "home/sessions/sessions_index.db",
                         f"home/sessions/projects/{PROJECT_ID}/sessions_index.db"}
    assert all("damaged" not in e for e in manifest["files"])
    for name in databases:  # a snapshot holds the same rows as the file it was taken from
        restored = tmp_path / "check" / Path(name).name
        restored.parent.mkdir(exist_ok=True)
        restored.write_bytes(files[name])
        source = gateway_home.home / name.removeprefix("home/")
        sql = ("SELECT session_id, data FROM sessions ORDER BY session_id" if name.endswith("sessions.db") else
               "SELECT session_id, updated_at FROM session_meta ORDER BY session_id")
        assert rows(restored, sql) == rows(source, sql) and rows(restored, sql)
    for name in ("gw-legacy.json", f"projects/{PROJECT_ID}/proj-sess-1.json", f"{RUN}/events.jsonl"):
        assert files[f"home/sessions/{name}"] == (gateway_home.sessions / name).read_bytes()
    assert not any(n.endswith(("-wal", "-shm", ".lock")) for n in files)


def test_verify_runs_quick_check_and_restore_puts_every_store_back_private(cli, gateway_home, tmp_path):
    archive = backup(cli, gateway_home, tmp_path)
    verified = cli("backup", "verify", archive, "--json")
    assert (verified.exit_code, verified.json()["problems"]) == (0, [])
    target = tmp_path / "restored"
    done = cli("backup", "restore", archive, "--to", target, "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    assert sorted(c["action"] for c in done.json()) == ["restored"] * len(STORE_FILES)
    sessions = target / "home" / "sessions"
    restored = sorted(str(p.relative_to(sessions)) for p in sessions.rglob("*") if p.is_file())
    locks = [n for n in restored if n.endswith(".lock")]  # each session restored under its JSON-store lock
    assert [n for n in restored if n not in locks] == STORE_FILES
    assert locks == [f"{n}.lock" for n in STORE_FILES if n.endswith(".json") and not n.startswith("run_")]
    assert {p.stat().st_mode & 0o777 for p in sessions.rglob("*") if p.is_file() and p.suffix != ".lock"} == {0o600}
    assert {p.stat().st_mode & 0o777 for p in [target, *target.rglob("*")] if p.is_dir()} == {0o700}
    assert rows(sessions / "sessions.db") == rows(gateway_home.db)
    assert (sessions / "tui0001a.json").read_bytes() == (gateway_home.sessions / "tui0001a.json").read_bytes()


def test_a_database_with_frames_left_in_its_wal_is_backed_up_with_them_and_left_as_it_is(
        cli, gateway_home, tmp_path):
    crashed_wal(gateway_home.db, "UPDATE sessions SET agent_name = ? WHERE session_id = 'gw-1'", "after the crash")
    assert (gateway_home.sessions / "sessions.db-wal").stat().st_size > 0
    before = snapshot(gateway_home.home)
    files = members(backup(cli, gateway_home, tmp_path))
    assert snapshot(gateway_home.home) == before  # no recovery ran on the user's files
    copy = tmp_path / "copy.db"
    copy.write_bytes(files["home/sessions/sessions.db"])
    assert rows(copy, "SELECT agent_name FROM sessions WHERE session_id = 'gw-1'") == [("after the crash",)]


def test_a_database_a_writer_has_open_is_backed_up_with_its_uncheckpointed_rows(cli, gateway_home, tmp_path):
    with live_wal(gateway_home.db, "UPDATE sessions SET agent_name = ? WHERE session_id = 'gw-1'", "live") as pid:
        assert shm_lock_holder(gateway_home.db) == pid
        before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (gateway_home.db, Path(f"{gateway_home.db}-wal"))}
        files = members(backup(cli, gateway_home, tmp_path))
        assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before  # only -shm read marks move
    copy = tmp_path / "copy.db"
    copy.write_bytes(files["home/sessions/sessions.db"])
    assert rows(copy, "SELECT agent_name FROM sessions WHERE session_id = 'gw-1'") == [("live",)]


def test_restore_never_replaces_a_database_another_process_has_open(cli, gateway_home, tmp_path):
    archive = backup(cli, gateway_home, tmp_path)
    with live_wal(gateway_home.db, "SELECT 1") as pid:
        dry = cli("--home", gateway_home.home, "backup", "restore", archive, "--on-conflict", "replace", "--dry-run",
                  "--json")
        planned = {c["path"]: (c["action"], c["detail"]) for c in dry.json()}
        assert planned["home/sessions/sessions.db"] == (
            "failed", f"the database is open in another process (pid {pid}); stop it, then restore")
        before = gateway_home.db.read_bytes(), gateway_home.db.stat().st_ino
        done = cli("--home", gateway_home.home, "backup", "restore", archive, "--on-conflict", "replace", "--yes",
                   "--json")
        assert done.exit_code == 1
        outcome = {c["path"]: c["action"] for c in done.json()}
        assert outcome["home/sessions/sessions.db"] == "failed"
        assert outcome["home/sessions/sessions_index.db"] == "replaced"
        assert (gateway_home.db.read_bytes(), gateway_home.db.stat().st_ino) == before


def test_restore_takes_the_databases_own_lock_so_a_connection_opened_after_planning_stops_it(
        cli, gateway_home, tmp_path, monkeypatch):
    """The plan saw nobody; a writer opens the database before the rename: the lock bytes say so, nothing moves."""
    from praisonmem.core.backup import sqlite as backup_sqlite

    archive = backup(cli, gateway_home, tmp_path)
    opened = []
    real = backup_sqlite.exclusive

    def opening_first(db, timeout):
        if db.name == "sessions.db" and not opened:
            opened.append(live_wal(db, "SELECT 1"))
            opened[0].__enter__()
        return real(db, timeout)

    monkeypatch.setattr(backup_sqlite, "exclusive", opening_first)
    before = gateway_home.db.stat().st_ino
    try:
        done = cli("--home", gateway_home.home, "--lock-timeout", "0.3", "backup", "restore", archive,
                   "--on-conflict", "replace", "--yes", "--json")
    finally:
        for writer in opened:
            writer.__exit__(None, None, None)
    failed = [c for c in done.json() if c["action"] == "failed"]
    assert [c["path"] for c in failed] == ["home/sessions/sessions.db"]
    assert "the database is open in another process" in failed[0]["detail"]
    assert gateway_home.db.stat().st_ino == before


def test_restore_refuses_a_database_whose_wal_holds_a_dead_writers_changes(cli, gateway_home, tmp_path):
    archive = backup(cli, gateway_home, tmp_path)
    crashed_wal(gateway_home.db, "UPDATE sessions SET agent_name = 'x' WHERE session_id = 'gw-1'")
    wal = Path(f"{gateway_home.db}-wal").read_bytes()
    done = cli("--home", gateway_home.home, "backup", "restore", archive, "--on-conflict", "replace", "--yes",
               "--json")
    outcome = {c["path"]: (c["action"], c["detail"]) for c in done.json()}
    assert outcome["home/sessions/sessions.db"] == (
        "failed", "sessions.db-wal beside it holds changes a writer did not finish; not restored")
    assert Path(f"{gateway_home.db}-wal").read_bytes() == wal


def test_verify_fails_a_database_that_does_not_pass_quick_check(cli, tmp_path):
    good = tmp_path / "good.db"
    conn = sqlite3.connect(good)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.executemany("INSERT INTO t VALUES (?)", [("row %d" % i * 40,) for i in range(300)])
    conn.execute("CREATE INDEX tx ON t(x)")
    conn.commit()
    conn.close()
    data = bytearray(good.read_bytes())
    data[4096 * 2 + 100: 4096 * 2 + 400] = b"\xff" * 300  # a b-tree page overwritten
    name = "home/sessions/sessions.db"
    entry = {**manifest_entry(name, bytes(data)), "sqlite": True}
    archive = crafted(tmp_path / "a.tar.gz", {name: bytes(data)}, entries=[entry])
    verified = cli("backup", "verify", archive, "--json")
    assert verified.exit_code == 1
    [problem] = verified.json()["problems"]
    assert problem["path"] == name and problem["problem"].startswith("the database fails its check (")
    restored = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes", "--json")
    assert restored.exit_code == 1 and [c["action"] for c in restored.json()] == ["failed"]
    assert not (tmp_path / "to" / name).exists()


TRANSCRIPT_DDL = ("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, data TEXT NOT NULL, agent_name TEXT, "
                  "gateway_session_id TEXT, agent_id TEXT, updated_at TEXT)")  # SqliteTranscriptStore's


def transcript_db(path: Path, *statements: str) -> bytes:
    """A ``sessions.db`` with the transcript store's table (then ``statements``), as bytes."""
    conn = sqlite3.connect(path)
    for statement in (TRANSCRIPT_DDL, *statements):
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path.read_bytes()


def test_raw_sidecars_in_an_archive_from_an_older_praisonmem_are_not_restored(cli, tmp_path):
    files = {"home/sessions/sessions.db": transcript_db(tmp_path / "old.db"),
             "home/sessions/sessions.db-wal": b"wal frames", "home/sessions/sessions.db-shm": b"shm"}
    archive = crafted(tmp_path / "old.tar.gz", files)
    done = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    actions = {c["path"]: (c["action"], c["detail"]) for c in done.json()}
    note = ("a SQLite sidecar an older praisonmem copied as it was; not restored (beside another copy of its "
            "database it could corrupt it)")
    assert actions == {"home/sessions/sessions.db": ("restored", None),
                       "home/sessions/sessions.db-wal": ("skipped", note),
                       "home/sessions/sessions.db-shm": ("skipped", note)}
    assert sorted(p.name for p in (tmp_path / "to/home/sessions").iterdir()) == ["sessions.db"]


@pytest.mark.parametrize("name, ok", [
    (f"home/sessions/projects/{PROJECT_ID}/proj-sess-1.json", True),
    (f"home/sessions/{RUN}/metadata.json", True),
    ("home/sessions/projects/not-hex!/x.json", False),
    (f"home/sessions/projects/{PROJECT_ID}/deeper/x.json", False),
    ("home/sessions/projects/x.json", False),
    ("home/sessions/run_bad/x.json", False),
    ("home/sessions/acp/sessions/x.json", False),
])
def test_the_restore_layout_takes_the_store_directories_and_nothing_else(cli, tmp_path, name, ok):
    archive = crafted(tmp_path / "a.tar.gz", {name: b'{"session_id": "s", "messages": []}'})
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    if ok:
        assert result.exit_code == 0, result.stderr
        assert (tmp_path / "to" / name).is_file()
    else:
        assert result.exit_code == 4 and "which backups never hold" in result.stderr
        assert not (tmp_path / "to").exists()


HOLD_IN_PLACE = """
import fcntl, sys, time
handle = open(sys.argv[1], "r+b")  # as the unified store's save: the data file itself, not truncated
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""


def hold_in_place(path: Path):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", HOLD_IN_PLACE, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_unified_file_being_rewritten_in_place_is_neither_read_nor_replaced_half_way(cli, gateway_home, tmp_path):
    archive = backup(cli, gateway_home, tmp_path)
    unified = gateway_home.sessions / "tui0001a.json"
    before = unified.read_bytes(), unified.stat().st_ino
    writer = hold_in_place(unified)
    try:
        read = cli("--home", gateway_home.home, "--memory-dir", tmp_path / "none", "--lock-timeout", "0.3",
                   "backup", "create", "--include", "sessions", "-o", tmp_path / "more")
        assert read.exit_code == 4 and "a writer has held it locked for over 0.3s" in read.stderr
        done = cli("--home", gateway_home.home, "--lock-timeout", "0.3", "backup", "restore", archive,
                   "--on-conflict", "replace", "--yes", "--json")
    finally:
        writer.kill()
        writer.wait()
    outcome = {c["path"]: c["action"] for c in done.json()}
    assert outcome["home/sessions/tui0001a.json"] == "failed" and outcome["home/sessions/tui0002b.json"] == "replaced"
    assert (unified.read_bytes(), unified.stat().st_ino) == before
