"""A ``learn delete`` on a ``learn.db`` killed (SIGKILL, by strace, on entering each of its durable writes: every
fsync, truncate and unlink) while an agent keeps the database open: the next praisonmem write, even one that
removes nothing itself, leaves no byte of the deleted entry's text in any file, and the library reads what it
should (the entry gone, or, when the kill came before the commit, still there until the delete is run again).

strace needs ptrace; without it the test is skipped, unless PRAISONMEM_REQUIRE_STRACE=1 (CI), where it fails.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.commands.test_session_crash import WRITE_CALLS, environment, strace_or_skip, write_calls
from tests.compat.test_learn_sqlite import library_add, library_read

SECRET = "zq7habit"
KILL_AT = ("fsync", "fdatasync", "ftruncate", "truncate", "unlink", "unlinkat")
# An agent's process: its connection stays open (no transaction), as a running agent's does, so SQLite's
# checkpoint-on-last-close does not happen for praisonmem
AGENT = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("SELECT count(*) FROM learn_store").fetchone()
print("open", flush=True)
sys.stdin.read()
"""


def praisonmem(home: Path, *args: object, strace: list[str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "praisonmem", "--home", str(home), "learn", *map(str, args)]
    return subprocess.run((strace or []) + command, env=environment(), capture_output=True, text=True, timeout=120)


def agent(db: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", AGENT, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "open"
    return proc


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.is_file() and SECRET.encode() in p.read_bytes())


def marker(db: Path) -> bool:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT 1 FROM learn_store WHERE key = 'praisonmem:scrub_pending'").fetchone() is not None
    finally:
        conn.close()


def test_a_killed_delete_is_scrubbed_by_the_next_write(tmp_path):
    strace = strace_or_skip()
    home = tmp_path / "home"
    home.mkdir()
    template = tmp_path / "template" / "learn.db"
    library_add(home, template, ("persona", "Prefers tea", None), ("persona", f"Secret {SECRET}", None))
    stores = library_read(home, template)
    [secret_id] = [k for k, v in stores["persona"].items() if SECRET in v["content"]]
    expected = {**stores, "persona": {k: v for k, v in stores["persona"].items() if k != secret_id}}

    def fresh(name: str) -> Path:
        shutil.copytree(template.parent, tmp_path / name)
        return tmp_path / name / "learn.db"

    traced = fresh("traced")
    holder = agent(traced)
    trace = tmp_path / "trace.txt"
    try:
        done = praisonmem(home, "delete", secret_id, "--db", traced, "--yes",
                          strace=[strace, "-f", "-qq", "-o", str(trace), "-e", f"trace={','.join(WRITE_CALLS)}"])
    finally:
        holder.communicate("")
    assert done.returncode == 0, done.stderr
    points = [(name, n) for name, n in write_calls(trace) if name in KILL_AT]
    assert len(points) >= 3, points
    scrubbed_by_marker = 0
    for number, (call, when) in enumerate(points):
        db = fresh(f"kill{number}")
        holder = agent(db)
        try:
            killed = praisonmem(home, "delete", secret_id, "--db", db, "--yes",
                                strace=[strace, "-f", "-qq", "-o", "/dev/null", "-e", f"trace={call}", "-e",
                                        f"inject={call}:signal=KILL:when={when}"])
            assert killed.returncode in (-9, 137), (call, when, killed.returncode, killed.stderr)
            still_there = secret_id in library_read(home, db).get("persona", {})
            if still_there:  # killed before the commit: nothing happened; the delete is run again
                rerun = praisonmem(home, "delete", secret_id, "--db", db, "--yes")
                assert rerun.returncode == 0, (call, when, rerun.stderr)
            else:
                scrubbed_by_marker += marker(db)
                # the next write removes nothing itself: only the marker makes it scrub
                nxt = praisonmem(home, "add", "improvements", "Next write", "--db", db)
                assert nxt.returncode == 0, (call, when, nxt.stderr)
            assert leftovers(db.parent) == [], (call, when)
            assert not marker(db), (call, when)
        finally:
            holder.communicate("")
        found = library_read(home, db)
        found.pop("improvements", None)
        assert found == expected, (call, when)
    assert scrubbed_by_marker, "no kill point fell between the commit and the scrub"
