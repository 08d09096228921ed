"""Bad input and failure. Each ends in its documented exit code and one stderr line,
with no traceback and nothing changed on disk (or, for a store file that cannot be read, that file listed
as unreadable and the rest of the home still usable)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import io
import tarfile
import time
from pathlib import Path

import pytest

from tests.helpers import refused, snapshot

HUGE = "9" * 5000  # more digits than Python's int() reads (sys.get_int_max_str_digits() is 4300)


MEMORY_CAP = 2 << 30  # a command that reads without bound fails here, instead of exhausting the machine


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_cli(*args: str, env: dict[str, str] | None = None, stdin=subprocess.DEVNULL, timeout: float = 20
            ) -> subprocess.CompletedProcess:
    """praisonmem in its own process, as a user runs it (main(), not run()), with a deadline and a memory
    cap: a command that blocks or reads without bound fails the test instead of hanging the machine."""
    return subprocess.run([sys.executable, "-m", "praisonmem", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, stdin=stdin, timeout=timeout, cwd=os.getcwd(),
                          preexec_fn=_capped)


def one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


# ---------------------------------------------------------------- 1. an unreadable config file


def test_an_unreadable_config_file_is_one_line_exit_5(config, fixture_home):
    config.symlink_to(config.name)  # a loop: unreadable even for root, as a 0000 file is for everyone else
    for extra in ([], ["--json"]):
        result = run_cli("--home", str(fixture_home), "session", "list", *extra)
        assert result.returncode == 5 and result.stdout == ""
        assert "config file" in one_line(result.stderr) and "too many levels of symbolic links" in result.stderr


def test_an_unreadable_config_file_in_process(cli, config, fixture_home):
    config.symlink_to(config.name)
    assert "config file" in refused(cli, fixture_home, "--home", fixture_home, "session", "list", code=5)
    assert "config file" in refused(cli, fixture_home, "--home", fixture_home, "session", "list", "--json", code=5)


# ---------------------------------------------------------------- 2. integers past Python's digit limit


def test_a_session_with_a_huge_integer_is_unreadable_not_fatal(cli, fixture_home):
    bad = fixture_home / "sessions" / "huge.json"
    bad.write_text('{"session_id": "huge", "messages": [], "n": ' + HUGE + "}")
    listing = cli("--home", fixture_home, "session", "list", "--json")
    assert listing.exit_code == 0
    row = next(r for r in listing.json() if r["file"].endswith("huge.json"))
    assert row["unreadable"] is True and "a number too long to read" in row["error"]
    assert len(listing.json()) == len(list((fixture_home / "sessions").glob("*.json")))
    checked = cli("--home", fixture_home, "check", "--json")
    assert checked.exit_code == 1
    assert any(f["file"].endswith("huge.json") and f["code"] == "parse" for f in checked.json()["findings"])
    assert "a number too long to read" in refused(cli, fixture_home, "--home", fixture_home, "session", "show",
                                                  "huge", code=4)
    found = cli("--home", fixture_home, "session", "search", "Paris")
    assert found.exit_code == 0 and "skipped unreadable session file" in one_line(found.stderr)
    deleted = cli("--home", fixture_home, "session", "delete", "huge", "--yes")
    assert deleted.exit_code == 0 and not bad.exists()


def test_a_memory_file_with_a_huge_integer_is_refused(cli, project):
    store = project / ".praisonai/memory/bob/long_term.json"
    store.write_text('[{"id": "x", "content": "c", "importance": ' + HUGE + "}]")
    assert "a number too long to read" in refused(cli, project, "memory", "list", "--user-id", "bob", code=4)


def test_an_upsonic_export_with_a_huge_integer_is_a_usage_error(cli, db, tmp_path):
    export = tmp_path / "export.json"
    export.write_text('{"format": "praisonmem-upsonic", "users": [], "sessions": [], "n": ' + HUGE + "}")
    assert "a number too long" in refused(cli, tmp_path, "upsonic", "import", export, "--db", db, "--yes", code=2)


# ---------------------------------------------------------------- 3. lone surrogate escapes


def test_lone_surrogates_in_memory_are_searchable(cli, project):
    store = project / ".praisonai/memory/bob/long_term.json"
    items = json.loads(store.read_text())
    items[0]["content"] = "bob note \ud800 one"
    store.write_text(json.dumps(items))  # ensure_ascii: the file holds the escape "\ud800"
    before = snapshot(project / ".praisonai")
    result = cli("memory", "search", "note", "--user-id", "bob")
    assert result.exit_code == 0 and result.stderr == "" and "bob note \\ud800 one" in result.stdout
    as_json = cli("memory", "search", "note", "--user-id", "bob", "--json")
    assert as_json.exit_code == 0 and "bob note \ud800 one" in [h["item"]["content"] for h in as_json.json()]
    assert snapshot(project / ".praisonai") == before


# ---------------------------------------------------------------- 4. markdown export of impossible times


@pytest.mark.parametrize("stamp", ["NaN", "1e300", "-1e300", "1e400", "-Infinity"])
def test_markdown_export_shows_a_time_it_cannot_date_as_stored(cli, tmp_path, stamp):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "t.json").write_text('{"session_id": "t", "created_at": ' + stamp + ', "messages": '
                                     '[{"role": "user", "content": "hi", "timestamp": ' + stamp + "}]}")
    result = cli("--home", tmp_path / "h", "session", "export", "t", "--format", "markdown")
    assert (result.exit_code, result.stderr) == (0, "")
    shown = {"NaN": "nan", "1e300": "1e+300", "-1e300": "-1e+300", "1e400": "inf", "-Infinity": "-inf"}[stamp]
    assert f"#0 user · {shown}" in result.stdout and f"- **Created:** {shown}" in result.stdout


# ---------------------------------------------------------------- 5. backup manifests of the wrong shape


def archive_with(path: Path, manifest: dict) -> Path:
    data = json.dumps(manifest).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("change, problem", [
    ({"files": 5}, "'files' is not a list"),
    ({"created_at": 5}, "'created_at' is not text"),
    ({"created_at": ["2026"]}, "'created_at' is not text"),
    ({"roots": ["sessions"]}, "'roots' is not an object"),
])
def test_a_manifest_field_of_the_wrong_type_is_refused_everywhere(cli, tmp_path, change, problem):
    manifest = {"format": "praisonmem-backup", "version": 1, "created_at": "2026-12-01T00:00:00+00:00",
                "roots": {"sessions": "/x"}, "files": [], **change}
    backups = tmp_path / "backups"
    backups.mkdir()
    archive = archive_with(backups / "praisonmem-backup-20261201T000000Z.tar.gz", manifest)
    listed = cli("backup", "list", backups, "--json")
    assert listed.exit_code == 0 and problem in listed.json()[0]["error"]
    assert problem in refused(cli, tmp_path, "--home", tmp_path / "h", "backup", "restore", archive,
                              "--to", tmp_path / "out", "--yes", code=4)
    verified = cli("backup", "verify", archive, "--json")
    assert verified.exit_code == 1 and problem in verified.json()["problems"][0]["problem"]


# ---------------------------------------------------------------- 6. user_memory that is not an object


@pytest.mark.parametrize("stored, kind", [("[1, 2]", "an array"), ("not json{", "a string"), ("3", "a number")])
def test_user_memory_that_is_not_an_object_is_one_line(cli, db, stored, kind):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE upsonic_user_memories SET user_memory = ? WHERE user_id = 'user_123'", (stored,))
    conn.close()
    message = refused(cli, db.parent, "upsonic", "user-memory", "user_123", "--db", db, code=4)
    assert f"user memory of 'user_123' is {kind}, not a JSON object" in message
    as_json = cli("upsonic", "user-memory", "user_123", "--db", db, "--json")
    assert as_json.exit_code == 0 and as_json.json()["user_id"] == "user_123"


# ---------------------------------------------------------------- 7. NUL in config, ~nosuchuser


@pytest.mark.parametrize("key", ["home", "memory_dir", "upsonic.db", "backup.dir"])
def test_nul_in_a_config_value_is_a_usage_error(cli, config, tmp_path, key):
    head, _, tail = key.partition(".")
    config.write_text((f"[{head}]\n{tail}" if tail else key) + ' = "a\\u0000b"\n')
    args = {"home": ["session", "list"], "memory_dir": ["memory", "list"], "upsonic.db": ["upsonic", "sessions"],
            "backup.dir": ["backup", "list"]}[key]
    assert "must not contain a NUL character" in refused(cli, config.parent, *args, code=2)


@pytest.mark.parametrize("how", ["env", "flag", "memory-flag", "db", "config-env"])
def test_a_tilde_of_no_user_is_a_usage_error(cli, monkeypatch, tmp_path, how):
    args = ["session", "list"]
    if how == "env":
        monkeypatch.setenv("PRAISONAI_HOME", "~nosuchuser/x")
    elif how == "flag":
        args = ["--home", "~nosuchuser/x", *args]
    elif how == "memory-flag":
        args = ["--memory-dir", "~nosuchuser/x", "memory", "list"]
    elif how == "db":
        args = ["upsonic", "sessions", "--db", "~nosuchuser/x.db"]
    else:
        monkeypatch.setenv("PRAISONMEM_CONFIG", "~nosuchuser/config.toml")
    assert "cannot expand '~nosuchuser" in refused(cli, tmp_path, *args, code=2)


# ---------------------------------------------------------------- 8. non-regular and endless inputs


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("args", [
    ["session", "import", "{input}"],
    ["upsonic", "import", "{input}", "--db", "{db}"],
    ["upsonic", "user-memory", "replace", "user_123", "--from", "{input}", "--db", "{db}"],
    ["backup", "verify", "{input}"],
    ["backup", "restore", "{input}", "--yes"],
])
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_an_input_that_is_not_a_regular_file_is_refused_without_blocking(fixture_home, db, fifo, tmp_path, args, kind):
    source = {"fifo": fifo, "device": Path("/dev/zero"), "directory": tmp_path}[kind]
    before = snapshot(fixture_home), snapshot(db.parent)
    argv = [a.format(input=source, db=db) for a in args]
    result = run_cli("--home", str(fixture_home), *argv)
    assert result.returncode == 2 and result.stdout == ""
    assert "not a regular file" in one_line(result.stderr)
    assert (snapshot(fixture_home), snapshot(db.parent)) == before


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_a_config_file_that_is_not_regular_is_refused_without_blocking(fixture_home, fifo, source):
    path = str(fifo) if source == "fifo" else source
    result = run_cli("--home", str(fixture_home), "session", "list", env={"PRAISONMEM_CONFIG": path})
    assert result.returncode == 2 and "config file" in one_line(result.stderr)
    assert "not a regular file" in result.stderr


@pytest.mark.parametrize("args", [
    ["session", "import", "-"],
    ["upsonic", "import", "-", "--db", "{db}"],
    ["upsonic", "user-memory", "replace", "user_123", "--from", "-", "--db", "{db}"],
])
def test_endless_standard_input_stops_at_the_input_limit(fixture_home, db, args):
    from praisonmem.core.io.inputfile import MAX_INPUT_BYTES

    before = snapshot(fixture_home), snapshot(db.parent)
    with open("/dev/zero", "rb") as zeros:
        result = run_cli("--home", str(fixture_home), *[a.format(db=db) for a in args], stdin=zeros, timeout=60)
    assert result.returncode == 4
    assert f"input limit of {MAX_INPUT_BYTES >> 20} MiB" in one_line(result.stderr)
    assert (snapshot(fixture_home), snapshot(db.parent)) == before


def test_a_file_past_the_input_limit_is_refused_before_it_is_read(cli, fixture_home, tmp_path, monkeypatch):
    from praisonmem.core.io import inputfile

    monkeypatch.setattr(inputfile, "MAX_INPUT_BYTES", 1000)
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"version": 1, "sessions": [{"session_id": "x" * 2000, "messages": []}]}))
    assert "larger than praisonmem's input limit of 0 MiB (1000 bytes)" in refused(
        cli, fixture_home, "--home", fixture_home, "session", "import", export, code=4)


# ---------------------------------------------------------------- 9. loops, wrong targets, full disks


def test_a_looping_symlink_in_the_sessions_dir_is_listed_as_unreadable(cli, fixture_home):
    (fixture_home / "sessions" / "loop.json").symlink_to("loop.json")
    before = snapshot(fixture_home)
    listing = cli("--home", fixture_home, "session", "list", "--json")
    assert listing.exit_code == 0
    row = next(r for r in listing.json() if r["file"].endswith("loop.json"))
    assert row["unreadable"] is True and "too many levels of symbolic links" in row["error"]
    found = cli("--home", fixture_home, "session", "search", "Paris")
    assert found.exit_code == 0 and "loop.json" in one_line(found.stderr)
    assert snapshot(fixture_home) == before


def test_restore_to_a_regular_file_is_a_usage_error(cli, fixture_home, tmp_path):
    made = cli("--home", fixture_home, "backup", "create", "--output", tmp_path / "b", "--include", "sessions")
    assert made.exit_code == 0
    archive = next((tmp_path / "b").glob("*.tar.gz"))
    target = tmp_path / "afile"
    target.write_text("keep")
    assert "--to" in refused(cli, tmp_path, "--home", fixture_home, "backup", "restore", archive, "--to", target,
                             "--yes", code=2)


@pytest.mark.parametrize("command", [["upsonic", "sessions"], ["upsonic", "user-memory", "user_123"],
                                     ["upsonic", "export", "-o", "-"],
                                     ["upsonic", "user-memory", "set", "user_123", "a=1"]])
def test_a_mistyped_table_name_is_refused(cli, db, command):
    option = "--user-memory-table" if "user-memory" in command else "--session-table"
    message = refused(cli, db.parent, *command, "--db", db, option, "nosuch", code=4)
    assert f"no table 'nosuch' ({option})" in message


def test_a_new_table_name_is_still_created_by_import(cli, db, tmp_path):
    export = tmp_path / "e.json"
    assert cli("upsonic", "export", "--db", db, "-o", export).exit_code == 0
    target = tmp_path / "new.db"
    result = cli("upsonic", "import", export, "--db", target, "--session-table", "mine", "--user-memory-table",
                 "traits", "--yes")
    assert result.exit_code == 0
    with sqlite3.connect(target) as conn:
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == \
            {"mine", "traits"}
    conn.close()


def test_a_full_disk_during_user_memory_set_says_so(cli, db, monkeypatch):
    """SQLITE_FULL (max_page_count is SQLite's own full-disk error) rolls the transaction back by itself;
    the error is the full disk, not the failed second rollback."""
    from praisonmem.core.upsonic import sqlite_backend

    real = sqlite_backend.connect_rw

    def full(path, timeout=5.0):
        conn = real(path, timeout)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(sqlite_backend, "connect_rw", full)
    before = db.read_bytes()
    message = refused(cli, db.parent, "upsonic", "user-memory", "set", "user_123", "big=" + "x" * 200_000,
                      "--db", db, code=5)
    assert "database or disk is full" in message and db.read_bytes() == before


# ---------------------------------------------------------------- 10. hot journals, abandoned learn locks

KILL_MID_WRITE = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")  # spill changed pages into the database before the commit
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE upsonic_user_memories SET user_memory = ?", ('{"a": "' + 'x' * 200000 + '"}',))
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def hot_db(db) -> Path:
    committed = db.read_bytes()
    subprocess.run([sys.executable, "-c", KILL_MID_WRITE, str(db)], check=False)
    assert Path(f"{db}-journal").stat().st_size > 0 and db.read_bytes() != committed
    return db


@pytest.mark.parametrize("command", [["upsonic", "sessions"], ["upsonic", "user-memory", "user_123"],
                                     ["upsonic", "export", "-o", "-"], ["upsonic", "show", "session_001"],
                                     ["upsonic", "user-memory", "set", "user_123", "a=1", "--dry-run"]])
def test_a_read_of_a_hot_journal_says_what_it_is_and_changes_nothing(cli, hot_db, command):
    message = refused(cli, hot_db.parent, *command, "--db", hot_db, code=4)
    assert "left a hot journal" in message and "write command" in message


def test_a_write_command_lets_sqlite_roll_a_hot_journal_back(cli, hot_db):
    result = cli("upsonic", "user-memory", "set", "user_123", "a=1", "--db", hot_db)
    assert result.exit_code == 0 and not Path(f"{hot_db}-journal").exists()
    shown = cli("upsonic", "user-memory", "user_123", "--db", hot_db, "--json")
    traits = shown.json()["user_memory"]
    assert traits["a"] == 1 and traits["detected_tone"] == "casual"  # the committed row, not the killed write's
    with sqlite3.connect(hot_db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_learn_lock_whose_holder_died_is_taken_over_not_timed_out(cli, fixture_home):
    store = next((fixture_home / "learn").rglob("persona.json"))
    lock = Path(f"{store}.lock")
    lock.write_text("")
    old = time.time() - 8  # no heartbeat for 8 s: a live holder touches it every 3.3 s
    os.utime(lock, (old, old))
    started = time.monotonic()
    result = cli("--home", fixture_home, "--lock-timeout", "0.5", "backup", "create", "--output",
                 fixture_home.parent / "b", "--include", "learn")
    waited = time.monotonic() - started
    assert result.exit_code == 0, result.stderr
    assert 1.0 < waited < 5, waited  # until the library's 10 s staleness, not the 0.5 s timeout
    assert not lock.exists()


def test_a_learn_lock_that_is_fresh_still_times_out(cli, fixture_home):
    store = next((fixture_home / "learn").rglob("persona.json"))
    Path(f"{store}.lock").write_text("")
    assert "locked by another writer" in refused(cli, fixture_home, "--home", fixture_home, "--lock-timeout",
                                                 "0.3", "learn", "add", "persona", "x", "--user-id", "alice", code=4)
