"""Helpers several test modules share: snapshots of a tree, lock holders in other processes, git repositories
like the fixture generator's, and homes built from files real praisonaiagents releases wrote."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO

from tests.conftest import FIXTURES, PRAISONAI_FIXTURES

VECTORS = json.loads((PRAISONAI_FIXTURES / "vectors.json").read_text(encoding="utf-8"))
FIXTURE_ROOT = VECTORS["workspace_ids"]["git_fixture_repo"]["root_commit"]
ERAS = FIXTURES / "praisonai-eras"
MD5_LEGACY_BOT, SHA_LEGACY_BOT = "history_e60a461d", "history_8fe938c0"
MD5_UNNAMED, SHA_UNNAMED = "history_b33aed8f", "history_d4f0bc5a"
MD5_CAFE, SHA_CAFE = "history_d1e95fe7", "history_2a8ac23c"


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` with its mode, mtime, size and bytes: equal snapshots, nothing changed."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            content = path.read_bytes() if path.is_file() else None
            state[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, st.st_size, content)
    return state


def rewrite(path: Path, change, timeout: float = 5.0) -> dict | None:
    """Change one session file as every praisonmem write does, in a transaction of its JSON-directory store:
    ``change`` gets the document re-read under the lock (``None`` when absent) and returns the one to write
    (``None``: write nothing). What was written."""
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

    with JsonDirStore(path.parent, path.parent / "spill").transaction([path], timeout) as tx:
        new = change(tx.read(path))
        if new is not None:
            tx.write(path, new)
        return new


def refused(cli, root: Path, *args: object, code: int) -> str:
    """Run praisonmem, which must exit ``code`` with nothing on stdout, one line on stderr and nothing changed
    under ``root``; that line."""
    before = snapshot(root)
    result = cli(*args)
    assert (result.exit_code, result.stdout) == (code, ""), result.stderr
    assert result.stderr.count("\n") == 1 and snapshot(root) == before
    return result.stderr


HOLD_FLOCK = textwrap.dedent("""
    import fcntl, sys, time
    handle = open(sys.argv[1], "w")
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
""")

HOLD_WRITE_LOCK = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("ROLLBACK")
""")


def hold_flock(lock_path: Path, seconds: float) -> subprocess.Popen:
    """Another process holding BSD flock(LOCK_EX) on ``lock_path`` for ``seconds`` (kill it when done)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD_FLOCK, str(lock_path), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def hold_sqlite_lock(db: Path, seconds: float) -> subprocess.Popen:
    """Another process holding an exclusive SQLite transaction on ``db`` for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD_WRITE_LOCK, str(db), str(seconds)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def git_env(date: str = "2026-01-01T00:00:00+0000") -> dict[str, str]:
    return dict(
        os.environ,
        GIT_AUTHOR_NAME="Fixture", GIT_AUTHOR_EMAIL="fixture@example.invalid",
        GIT_COMMITTER_NAME="Fixture", GIT_COMMITTER_EMAIL="fixture@example.invalid",
        GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date,
    )


def git(repo: Path, *args: str, date: str = "2026-01-01T00:00:00+0000") -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                   check=True, capture_output=True, env=git_env(date))


def make_fixture_repo(path: Path) -> Path:
    """The generator's repo: one empty commit with fixed author and date (its root is FIXTURE_ROOT)."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=git_env())
    git(path, "commit", "-q", "--allow-empty", "-m", "fixture root")
    return path


def era_home(tmp_path: Path, *eras: str) -> Path:
    """A PRAISONAI_HOME holding the name-only history files of the given releases."""
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    for era in eras:
        for path in (ERAS / era / "home" / "sessions").glob("history_*.json"):
            shutil.copy(path, home / "sessions" / path.name)
            (home / "sessions" / path.name).chmod(0o600)
    return home


def spill(home: Path, session_id: str, stem: str, *messages: str) -> Path:
    """A spill record as the library writes one after a failed write: the message and the session it was for."""
    token = hashlib.md5(session_id.encode()).hexdigest()[:8]  # the library's is random: one per spill
    path = home / "state" / "session_spill" / f"{stem}.1796050189520.12503.{token}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"session_id": session_id, "spilled_at": "2026-11-30T14:49:49.520912+00:00",
              "messages": [{"role": "user", "content": m, "timestamp": 1796050189.5 + i, "metadata": {}}
                           for i, m in enumerate(messages)]}
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path


_LOCAL_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?\b")


def normalise_times(text: str) -> str:
    """Human output with every local time (``YYYY-MM-DD HH:MM[:SS]``, which depends on the time zone) shown as
    ``<time>``; stored dates and ISO timestamps stay as they are."""
    return _LOCAL_TIME.sub("<time>", text)


def run_on_a_pty(args: list[str], cwd: Path, env: dict[str, str], *, stdout: IO[bytes] | None = None
                 ) -> tuple[int, str]:
    """Run ``python -m praisonmem`` with stderr (and stdout, unless given a file) on a pseudo-terminal, so Rich
    sees a terminal; the exit code and everything the terminal received."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", *args], cwd=cwd, env={**os.environ, **env},
                            stdin=subprocess.DEVNULL, stdout=slave if stdout is None else stdout, stderr=slave)
    os.close(slave)
    received = read_pty(master, proc, args)
    return proc.wait(timeout=30), received.decode("utf-8", errors="replace")


def read_pty(master: int, proc: subprocess.Popen, args: list[str]) -> bytes:
    """Everything a child sends to the pty ``master`` until it closes its end (then ``master`` is closed);
    a child silent for 30 s is killed and fails the test."""
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output from {args} for 30 s")
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks)


def exported(paths, names: list[str] = (), *, everything: bool = False) -> list[tuple[str, str, dict]]:
    """The (file, session id, document) of each session ``session export`` writes, read as it reads them (spilled
    turns merged in); an unreadable one raises."""
    from praisonmem.core.sessions import open_store, transfer
    from praisonmem.core.sessions.ops import resolve_all

    store = open_store(paths)
    return list(transfer.documents(store, store.refs() if everything else resolve_all(store, list(names))))


def export_text(fmt: str, docs) -> str:
    """What ``session export --format fmt`` writes for these documents."""
    from praisonmem.core.sessions import transfer

    chunks = transfer.CHUNKS[transfer.ExportFormat(fmt)](docs)
    return "".join(c.decode("utf-8") if isinstance(c, bytes) else c for c in chunks)
