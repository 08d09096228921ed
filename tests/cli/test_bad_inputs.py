"""Bad input across every command group and store, as a table: each case exits with its documented code
(``praisonmem.core.errors``), writes exactly one line on stderr and nothing on stdout, shows no traceback,
and leaves every file it could reach exactly as it was (bytes, mtimes, modes: :func:`tests.helpers.snapshot`).

A case is ``(id, argv, exit code, setup)``. ``argv`` may name the world's places: ``{home}`` (a copy of the
real 1.7.17 home), ``{db}`` (the real Upsonic SQLite store), ``{in}`` (a directory of bad input files, see
:func:`inputs`), ``{fifo}`` (a named pipe with no writer), ``{archive}`` (a good backup), ``{out}`` (a place
that does not exist yet). cwd is a copy of the real project (its ``.praisonai/memory``). ``setup`` names a
function that damages the world further before the snapshot is taken. :data:`PG_CASES` are the Upsonic
cases on the real PostgresStorage tables, where the snapshot also covers every row (``tests/upsonicpg.py``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.helpers import snapshot

HUGE = "9" * 5000


def inputs(directory: Path) -> None:
    """The bad input files every case may name."""
    directory.mkdir()
    (directory / "notjson.json").write_text("{not json")
    (directory / "array.json").write_text("[1, 2, 3]")
    (directory / "huge.json").write_text('{"version": 1, "sessions": [], "n": ' + HUGE + "}")
    (directory / "badutf8.json").write_bytes(b'{"version": 1, "sessions": ["\xff"]}')
    (directory / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (directory / "nul.json").write_bytes(b'{"version": 1,\x00 "sessions": []}')
    (directory / "upsonic-wrong.json").write_text('{"format": "praisonmem-upsonic", "users": {}, "sessions": []}')
    (directory / "upsonic-row.json").write_text('{"format": "praisonmem-upsonic", "users": [{"user_id": 5}], '
                                                '"sessions": []}')
    (directory / "export.json").write_text('{"version": 1, "sessions": [{"session_id": "my_chat", '
                                           '"messages": []}]}')
    (directory / "traits.json").write_text('{"tone": "dry"}')
    (directory / "dir").mkdir()
    (directory / "afile").write_text("not a directory")
    (directory / "not-a-db.db").write_text("hello, not SQLite")
    _archive(directory / "manifest-files.tar.gz", {"files": 5})
    _archive(directory / "manifest-created.tar.gz", {"created_at": [1]})
    _archive(directory / "manifest-roots.tar.gz", {"roots": None})
    _archive(directory / "manifest-entry.tar.gz", {"files": [{"path": "home/sessions/a.json", "size": 1,
                                                             "sha256": "0" * 64, "mtime": "yesterday"}]})
    _archive(directory / "manifest-format.tar.gz", {"format": "zip"})
    with tarfile.open(directory / "no-manifest.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("home/sessions/a.json")
        tar.addfile(info, io.BytesIO(b""))


def _archive(path: Path, change: dict) -> None:
    manifest = {"format": "praisonmem-backup", "version": 1, "created_at": "2026-12-01T00:00:00+00:00",
                "roots": {"sessions": "/x"}, "files": [], **change}
    data = json.dumps(manifest).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


# ---------------------------------------------------------------- damage a case may ask for


def huge_session(w: World) -> None:
    (w.home / "sessions" / "huge.json").write_text('{"session_id": "huge", "messages": [], "n": ' + HUGE + "}")


def truncated_session(w: World) -> None:
    (w.home / "sessions" / "cut.json").write_text('{"session_id": "cut", "messages": [')


def looping_session(w: World) -> None:
    (w.home / "sessions" / "loop.json").symlink_to("loop.json")


def huge_memory(w: World) -> None:
    (w.project / ".praisonai/memory/bob/long_term.json").write_text('[{"id": "x", "content": "c", "n": ' + HUGE + "}]")


def fifo_memory(w: World) -> None:
    path = w.project / ".praisonai/memory/bob/short_term.json"
    path.unlink()
    os.mkfifo(path)


def array_traits(w: World) -> None:
    with sqlite3.connect(w.db) as conn:
        conn.execute("UPDATE upsonic_user_memories SET user_memory = '[1]' WHERE user_id = 'user_123'")
    conn.close()


def hot_journal(w: World) -> None:
    code = ("import os, signal, sqlite3, sys\n"
            "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "conn.execute('PRAGMA cache_size=1'); conn.execute('BEGIN IMMEDIATE')\n"
            "conn.execute('UPDATE upsonic_user_memories SET user_memory = ?', ('{\"a\": \"' + 'x' * 200000 + '\"}',))\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code, str(w.db)], check=False)
    assert Path(f"{w.db}-journal").exists()


def learn_locked(w: World) -> None:
    Path(f"{w.home}/learn/private/alice/persona.json.lock").write_text("")


def config_text(text: str):
    def write(w: World) -> None:
        w.config.write_text(text)
    return write


def config_fifo(w: World) -> None:
    os.mkfifo(w.config)


def config_loop(w: World) -> None:
    w.config.symlink_to(w.config.name)


def good_archive(w: World) -> None:
    from praisonmem.cli.app import run

    assert run(["--home", str(w.home), "backup", "create", "--output", str(w.archive.parent),
                "--include", "sessions"]) == 0
    made = next(w.archive.parent.glob("praisonmem-backup-*.tar.gz"))
    made.rename(w.archive)


SETUPS = {
    "huge_session": huge_session, "truncated_session": truncated_session, "looping_session": looping_session,
    "huge_memory": huge_memory, "fifo_memory": fifo_memory, "array_traits": array_traits, "hot": hot_journal,
    "learn_locked": learn_locked, "config_fifo": config_fifo, "config_loop": config_loop, "archive": good_archive,
    "config_toml": config_text("home = \n"), "config_key": config_text('colour = "red"\n'),
    "config_nul": config_text('home = "a\\u0000b"\n'), "config_type": config_text("lock_timeout = \"soon\"\n"),
    "config_nul_db": config_text('[upsonic]\ndb = "x\\u0000.db"\n'),
    "config_tilde": config_text('home = "~nosuchuser/home"\n'),
}

# (id, argv, exit code, setup)
CASES = [
    # -- root options and the command tree
    ("unknown-command", ["nosuch"], 2, None),
    ("unknown-root-option", ["--colour", "session", "list"], 2, None),
    ("empty-home", ["--home", "", "session", "list"], 2, None),
    ("blank-memory-dir", ["--memory-dir", " ", "memory", "list"], 2, None),
    ("lock-timeout-negative", ["--lock-timeout", "-1", "session", "list"], 2, None),
    ("lock-timeout-nan", ["--lock-timeout", "nan", "memory", "store", "x"], 2, None),
    ("home-of-no-user", ["--home", "~nosuchuser/x", "session", "list"], 2, None),
    ("memory-dir-of-no-user", ["--memory-dir", "~nosuchuser/x", "memory", "list"], 2, None),
    # -- workspace
    ("workspace-unknown-option", ["workspace", "id", "--agnt", "x"], 2, None),
    ("workspace-paths-extra-arg", ["workspace", "paths", "extra"], 2, None),
    # -- session (JSON directory store)
    ("show-missing", ["--home", "{home}", "session", "show", "nosuch"], 3, None),
    ("show-huge-int", ["--home", "{home}", "session", "show", "huge"], 4, "huge_session"),
    ("show-truncated", ["--home", "{home}", "session", "show", "cut"], 4, "truncated_session"),
    ("show-loop", ["--home", "{home}", "session", "show", "{home}/sessions/loop.json"], 5, "looping_session"),
    ("show-tail-negative", ["--home", "{home}", "session", "show", "my_chat", "--tail", "-1"], 2, None),
    ("rename-blank", ["--home", "{home}", "session", "rename", "my_chat", "  "], 2, None),
    ("rename-missing", ["--home", "{home}", "session", "rename", "nosuch", "x"], 3, None),
    ("rename-onto-existing", ["--home", "{home}", "session", "rename", "my_chat", "compacted-demo"], 4, None),
    ("rename-huge-int", ["--home", "{home}", "session", "rename", "huge", "big"], 4, "huge_session"),
    ("delete-missing", ["--home", "{home}", "session", "delete", "nosuch", "--yes"], 3, None),
    ("delete-unconfirmed", ["--home", "{home}", "session", "delete", "my_chat"], 4, None),
    ("delete-outside", ["--home", "{home}", "session", "delete", "../learn/private/alice/persona", "--yes"], 3, None),
    ("prune-bad-duration", ["--home", "{home}", "session", "prune", "--older-than", "5x"], 2, None),
    ("prune-huge-duration", ["--home", "{home}", "session", "prune", "--older-than", "99999999999999w"], 2, None),
    ("prune-unconfirmed", ["--home", "{home}", "session", "prune", "--older-than", "1s"], 4, None),
    ("export-missing", ["--home", "{home}", "session", "export", "nosuch"], 3, None),
    ("export-nothing", ["--home", "{home}", "session", "export"], 2, None),
    ("export-bad-format", ["--home", "{home}", "session", "export", "my_chat", "--format", "pdf"], 2, None),
    ("export-onto-a-directory", ["--home", "{home}", "session", "export", "my_chat", "-o", "{in}/dir"], 4, None),
    ("export-huge-int", ["--home", "{home}", "session", "export", "huge"], 4, "huge_session"),
    ("import-not-json", ["--home", "{home}", "session", "import", "{in}/notjson.json"], 2, None),
    ("import-array", ["--home", "{home}", "session", "import", "{in}/array.json"], 2, None),
    ("import-huge-int", ["--home", "{home}", "session", "import", "{in}/huge.json"], 2, None),
    ("import-bad-utf8", ["--home", "{home}", "session", "import", "{in}/badutf8.json"], 2, None),
    ("import-too-deep", ["--home", "{home}", "session", "import", "{in}/deep.json"], 2, None),
    ("import-nul", ["--home", "{home}", "session", "import", "{in}/nul.json"], 2, None),
    ("import-missing", ["--home", "{home}", "session", "import", "{in}/nosuch.json"], 3, None),
    ("import-fifo", ["--home", "{home}", "session", "import", "{fifo}"], 2, None),
    ("import-device", ["--home", "{home}", "session", "import", "/dev/zero"], 2, None),
    ("import-directory", ["--home", "{home}", "session", "import", "{in}/dir"], 2, None),
    ("import-bad-conflict", ["--home", "{home}", "session", "import", "{in}/export.json", "--on-conflict", "x"], 2,
     None),
    ("import-conflict", ["--home", "{home}", "session", "import", "{in}/export.json"], 4, None),
    ("list-bad-sort", ["--home", "{home}", "session", "list", "--sort", "size"], 2, None),
    ("list-negative-limit", ["--home", "{home}", "session", "list", "--limit", "-1"], 2, None),
    ("adopt-unknown-agent", ["--home", "{home}", "session", "adopt", "No Such Agent"], 3, None),
    ("session-home-is-a-file", ["--home", "{in}/afile", "session", "list"], 2, None),
    # -- memory (FileMemory in ./.praisonai/memory)
    ("memory-store-blank", ["memory", "store", "  "], 2, None),
    ("memory-store-importance", ["memory", "store", "x", "--importance", "nan"], 2, None),
    ("memory-store-meta", ["memory", "store", "x", "--meta", "novalue"], 2, None),
    ("memory-store-provider", ["memory", "store", "x", "--provider", "nosuch"], 2, None),
    ("memory-search-type", ["memory", "search", "q", "--type", "medium"], 2, None),
    ("memory-list-user-path", ["memory", "list", "--user-id", "../alice"], 2, None),
    ("memory-delete-missing", ["memory", "delete", "nosuchid", "--user-id", "bob"], 3, None),
    ("memory-reset-unknown-user", ["memory", "reset", "--all", "--user-id", "typo", "--yes"], 3, None),
    ("memory-reset-unconfirmed", ["memory", "reset", "--all", "--user-id", "bob"], 4, None),
    ("memory-list-huge-int", ["memory", "list", "--user-id", "bob"], 4, "huge_memory"),
    ("memory-search-huge-int", ["memory", "search", "c", "--user-id", "bob"], 4, "huge_memory"),
    ("memory-list-fifo", ["memory", "list", "--user-id", "bob"], 5, "fifo_memory"),
    ("memory-extract-user-path", ["memory", "extract", "I like tea", "--user-id", "../x"], 2, None),
    # -- episodic
    ("episodic-add-blank", ["episodic", "add", ""], 2, None),
    ("episodic-bad-date", ["episodic", "get", "--date", "2026-13-01"], 2, None),
    ("episodic-days-back", ["episodic", "get", "--days-back", "0"], 2, None),
    ("episodic-delete-missing", ["episodic", "delete", "nosuch", "--user-id", "bob"], 3, None),
    ("episodic-importance", ["episodic", "add", "x", "--importance", "7"], 2, None),
    # -- learn
    ("learn-unknown-store", ["--home", "{home}", "learn", "list", "--store", "nosuch"], 2, None),
    ("learn-bad-scope", ["--home", "{home}", "learn", "list", "--scope", "team"], 2, None),
    ("learn-add-blank", ["--home", "{home}", "learn", "add", "persona", " ", "--user-id", "alice"], 2, None),
    ("learn-show-missing", ["--home", "{home}", "learn", "show", "nosuch", "--user-id", "alice"], 3, None),
    ("learn-delete-missing", ["--home", "{home}", "learn", "delete", "nosuch", "--user-id", "alice", "--yes"], 3,
     None),
    ("learn-clear-unconfirmed", ["--home", "{home}", "learn", "clear", "persona", "--user-id", "alice"], 4, None),
    ("learn-add-locked", ["--home", "{home}", "--lock-timeout", "0.2", "learn", "add", "persona", "x",
                          "--user-id", "alice"], 4, "learn_locked"),
    # -- upsonic on SQLite
    ("upsonic-no-db", ["upsonic", "sessions"], 2, None),
    ("upsonic-missing-db", ["upsonic", "sessions", "--db", "{in}/nosuch.db"], 3, None),
    ("upsonic-not-sqlite", ["upsonic", "sessions", "--db", "{in}/not-a-db.db"], 4, None),
    ("upsonic-device", ["upsonic", "sessions", "--db", "/dev/null"], 2, None),
    ("upsonic-directory", ["upsonic", "sessions", "--db", "{in}/dir"], 3, None),  # no JSONStorage tables in it
    ("upsonic-db-of-no-user", ["upsonic", "sessions", "--db", "~nosuchuser/x.db"], 2, None),
    ("upsonic-sqlite-url-host", ["upsonic", "sessions", "--db", "sqlite://host/x.db"], 2, None),
    ("upsonic-bad-pg-url", ["upsonic", "sessions", "--db", "postgresql://[::1/x"], 2, None),
    ("upsonic-schema-on-sqlite", ["upsonic", "sessions", "--db", "{db}", "--schema", "x"], 2, None),
    ("upsonic-mistyped-session-table", ["upsonic", "sessions", "--db", "{db}", "--session-table", "nosuch"], 4, None),
    ("upsonic-mistyped-user-table", ["upsonic", "user-memory", "user_123", "--db", "{db}", "--user-memory-table",
                                     "nosuch"], 4, None),
    ("upsonic-show-missing", ["upsonic", "show", "nosuch", "--db", "{db}"], 3, None),
    ("upsonic-user-missing", ["upsonic", "user-memory", "nosuch", "--db", "{db}"], 3, None),
    ("upsonic-traits-array", ["upsonic", "user-memory", "user_123", "--db", "{db}"], 4, "array_traits"),
    ("upsonic-set-traits-array", ["upsonic", "user-memory", "set", "user_123", "a=1", "--db", "{db}"], 4,
     "array_traits"),
    ("upsonic-set-no-value", ["upsonic", "user-memory", "set", "user_123", "novalue", "--db", "{db}"], 2, None),
    ("upsonic-replace-fifo", ["upsonic", "user-memory", "replace", "user_123", "--from", "{fifo}", "--db", "{db}"],
     2, None),
    ("upsonic-replace-array", ["upsonic", "user-memory", "replace", "user_123", "--from", "{in}/array.json",
                               "--db", "{db}"], 2, None),
    ("upsonic-replace-not-json", ["upsonic", "user-memory", "replace", "user_123", "--from", "{in}/notjson.json",
                                  "--db", "{db}"], 2, None),
    ("upsonic-import-not-json", ["upsonic", "import", "{in}/notjson.json", "--db", "{db}", "--yes"], 2, None),
    ("upsonic-import-wrong-shape", ["upsonic", "import", "{in}/upsonic-wrong.json", "--db", "{db}", "--yes"], 2,
     None),
    ("upsonic-import-bad-row", ["upsonic", "import", "{in}/upsonic-row.json", "--db", "{db}", "--yes"], 2, None),
    ("upsonic-import-fifo", ["upsonic", "import", "{fifo}", "--db", "{db}", "--yes"], 2, None),
    ("upsonic-import-huge-int", ["upsonic", "import", "{in}/huge.json", "--db", "{db}", "--yes"], 2, None),
    ("upsonic-hot-journal-read", ["upsonic", "sessions", "--db", "{db}"], 4, "hot"),
    ("upsonic-hot-journal-dry-run", ["upsonic", "user-memory", "set", "user_123", "a=1", "--dry-run", "--db",
                                     "{db}"], 4, "hot"),
    ("upsonic-convert-no-direction", ["upsonic", "convert", "x", "--db", "{db}"], 2, None),
    ("upsonic-convert-missing", ["--home", "{home}", "upsonic", "convert", "nosuch", "--to-praisonai", "--db",
                                 "{db}"], 3, None),
    # -- check and migrate
    ("check-empty-path", ["check", ""], 2, None),
    ("check-missing-path", ["check", "{in}/nosuch"], 3, None),
    ("migrate-unknown-option", ["migrate", "--all-of-it"], 2, None),
    # -- backup
    ("backup-create-include", ["--home", "{home}", "backup", "create", "--include", "photos", "-o", "{out}"], 2, None),
    ("backup-list-missing", ["backup", "list", "{in}/nosuch"], 3, None),
    ("backup-list-file", ["backup", "list", "{in}/afile"], 2, None),
    ("backup-verify-missing", ["backup", "verify", "{in}/nosuch.tar.gz"], 3, None),
    ("backup-verify-fifo", ["backup", "verify", "{fifo}"], 2, None),
    ("backup-verify-directory", ["backup", "verify", "{in}/dir"], 2, None),
    ("backup-restore-fifo", ["--home", "{home}", "backup", "restore", "{fifo}", "--yes"], 2, None),
    ("backup-restore-device", ["--home", "{home}", "backup", "restore", "/dev/zero", "--yes"], 2, None),
    ("backup-restore-not-gzip", ["--home", "{home}", "backup", "restore", "{in}/notjson.json", "--yes"], 4, None),
    ("backup-restore-no-manifest", ["--home", "{home}", "backup", "restore", "{in}/no-manifest.tar.gz", "--yes"], 4,
     None),
    ("backup-restore-files-type", ["--home", "{home}", "backup", "restore", "{in}/manifest-files.tar.gz", "--yes"],
     4, None),
    ("backup-restore-created-type", ["--home", "{home}", "backup", "restore", "{in}/manifest-created.tar.gz",
                                     "--yes"], 4, None),
    ("backup-restore-roots-type", ["--home", "{home}", "backup", "restore", "{in}/manifest-roots.tar.gz", "--yes"],
     4, None),
    ("backup-restore-bad-mtime", ["--home", "{home}", "backup", "restore", "{in}/manifest-entry.tar.gz", "--yes"],
     4, None),
    ("backup-restore-not-ours", ["--home", "{home}", "backup", "restore", "{in}/manifest-format.tar.gz", "--yes"],
     4, None),
    ("backup-restore-to-a-file", ["--home", "{home}", "backup", "restore", "{archive}", "--to", "{in}/afile",
                                  "--yes"], 2, "archive"),
    ("backup-restore-unconfirmed", ["--home", "{home}", "backup", "restore", "{archive}", "--to", "{out}"], 4,
     "archive"),
    ("backup-restore-bad-conflict", ["--home", "{home}", "backup", "restore", "{archive}", "--on-conflict", "merge",
                                     "--yes"], 2, "archive"),
    # -- config
    ("config-set-unknown-key", ["config", "set", "colour", "red"], 2, None),
    ("config-set-bad-timeout", ["config", "set", "lock_timeout", "-1"], 2, None),
    ("config-set-bad-output", ["config", "set", "output", "xml"], 2, None),
    ("config-get-unknown-key", ["config", "get", "colour"], 2, None),
    ("config-get-unset", ["config", "get", "home"], 3, None),
    ("config-not-toml", ["session", "list"], 2, "config_toml"),
    ("config-unknown-key", ["session", "list"], 2, "config_key"),
    ("config-wrong-type", ["session", "list"], 2, "config_type"),
    ("config-nul-home", ["session", "list"], 2, "config_nul"),
    ("config-nul-db", ["upsonic", "sessions"], 2, "config_nul_db"),
    ("config-home-of-no-user", ["session", "list"], 2, "config_tilde"),
    ("config-fifo", ["session", "list"], 2, "config_fifo"),
    ("config-loop", ["session", "list"], 5, "config_loop"),
    ("config-loop-json", ["session", "list", "--json"], 5, "config_loop"),
]


class World:
    def __init__(self, tmp_path: Path, home: Path, project: Path, db: Path) -> None:
        self.root, self.home, self.project, self.db = tmp_path, home, project, db
        self.inputs = tmp_path / "in"
        self.fifo = tmp_path / "pipe"
        self.archive = tmp_path / "backups" / "good.tar.gz"
        self.out = tmp_path / "out"
        self.config = tmp_path / "cfg" / "config.toml"

    def argv(self, args: list[str]) -> list[str]:
        places = {"home": self.home, "db": self.db, "in": self.inputs, "fifo": self.fifo, "archive": self.archive,
                  "out": self.out}
        return [a.format(**places) for a in args]


@pytest.fixture
def world(tmp_path, fixture_home, project, db, monkeypatch) -> World:
    w = World(tmp_path, fixture_home, project, db)
    inputs(w.inputs)
    os.mkfifo(w.fifo)
    w.archive.parent.mkdir()
    w.config.parent.mkdir()
    monkeypatch.setenv("PRAISONMEM_CONFIG", str(w.config))
    monkeypatch.setenv("PRAISONMEM_CACHE", "false")  # the cache dir is praisonmem's, not the user's data
    return w


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 80 and len({c[0] for c in CASES}) == len(CASES)


@pytest.fixture
def deadline():
    """A case that blocks (a pipe, a device) fails after 15 s instead of hanging the suite."""
    def expired(signum, frame):
        raise AssertionError("praisonmem blocked for 15 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(15)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


MEMORY_CAP = 2 << 30


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def in_a_capped_process(argv: list[str]) -> Result:
    """A case that could read without bound (a device) runs in its own process under a memory cap: a
    regression fails the test, instead of exhausting the machine."""
    done = subprocess.run([sys.executable, "-m", "praisonmem", *argv], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, preexec_fn=_capped)
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("name, args, code, setup", CASES, ids=[c[0] for c in CASES])
def test_bad_input(cli, world, deadline, name, args, code, setup):
    if setup:
        SETUPS[setup](world)
    before = snapshot(world.root)
    argv = world.argv(args)
    result = in_a_capped_process(argv) if any(a.startswith("/dev/") for a in argv) else cli(*argv)
    assert result.exit_code == code, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert snapshot(world.root) == before


def test_bad_input_in_its_own_process(world):
    """A sample run as a user runs it (the console script's main()): the same line, the same code."""
    for args, code in ((["session", "import", str(world.fifo)], 2), (["upsonic", "sessions"], 2)):
        before = snapshot(world.root)
        result = subprocess.run([sys.executable, "-m", "praisonmem", "--home", str(world.home), *args],
                                capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert (result.returncode, result.stdout) == (code, "")
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert snapshot(world.root) == before


# ---------------------------------------------------------------- the same on Upsonic's PostgresStorage

PG_CASES = [
    ("pg-mistyped-session-table", ["upsonic", "sessions", "--db", "{url}", "--session-table", "nosuch"], 4),
    ("pg-mistyped-user-table", ["upsonic", "user-memory", "user_123", "--db", "{url}", "--user-memory-table",
                                "nosuch"], 4),
    ("pg-mistyped-table-write", ["upsonic", "user-memory", "set", "user_123", "a=1", "--db", "{url}",
                                 "--user-memory-table", "nosuch"], 4),
    ("pg-user-missing", ["upsonic", "user-memory", "nosuch", "--db", "{url}"], 3),
    ("pg-session-missing", ["upsonic", "show", "nosuch", "--db", "{url}"], 3),
    ("pg-schema-missing", ["upsonic", "sessions", "--db", "{url}", "--schema", "nosuch"], 3),
    ("pg-traits-array", ["upsonic", "user-memory", "user_456", "--db", "{url}"], 4),
    ("pg-set-traits-array", ["upsonic", "user-memory", "set", "user_456", "a=1", "--db", "{url}"], 4),
    ("pg-replace-fifo", ["upsonic", "user-memory", "replace", "user_123", "--from", "{fifo}", "--db", "{url}"], 2),
    ("pg-replace-not-json", ["upsonic", "user-memory", "replace", "user_123", "--from", "{in}/notjson.json",
                             "--db", "{url}"], 2),
    ("pg-import-not-json", ["upsonic", "import", "{in}/notjson.json", "--db", "{url}", "--yes"], 2),
    ("pg-import-fifo", ["upsonic", "import", "{fifo}", "--db", "{url}", "--yes"], 2),
    ("pg-import-huge-int", ["upsonic", "import", "{in}/huge.json", "--db", "{url}", "--yes"], 2),
    ("pg-set-no-value", ["upsonic", "user-memory", "set", "user_123", "novalue", "--db", "{url}"], 2),
    ("pg-unsupported-url", ["upsonic", "sessions", "--db", "mysql://u@h/db"], 2),
]


@pytest.fixture(scope="module")
def pg_world(pg_module):
    from tests.pgcluster import require_psycopg
    from tests.upsonicpg import load

    psycopg = require_psycopg()
    load(pg_module)
    with psycopg.connect(pg_module.rw_url) as conn:
        conn.execute("UPDATE upsonic_user_memories SET user_memory = '[1, 2]'::jsonb WHERE user_id = 'user_456'")
    return pg_module


@pytest.mark.parametrize("name, args, code", PG_CASES, ids=[c[0] for c in PG_CASES])
def test_bad_input_on_postgresql(cli, world, pg_world, deadline, name, args, code):
    from tests.upsonicpg import snapshot as pg_snapshot

    before = snapshot(world.root), pg_snapshot(pg_world)
    argv = [a.replace("{url}", pg_world.rw_url) for a in world.argv([a.replace("{url}", "{{url}}") for a in args])]
    result = cli(*argv)
    assert result.exit_code == code, result.stderr
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert pg_world.rw_password not in result.stderr
    assert (snapshot(world.root), pg_snapshot(pg_world)) == before
