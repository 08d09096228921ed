"""Lock files that are symlinks.

A sidecar ``X.json.lock`` that is a symlink is refused with exit 5 and nothing
changed, whatever filelock does with it; a learn-store lock that is a symlink is
refused too, instead of spinning forever; every lock wait keeps its deadline.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from praisonmem.core import learn
from praisonmem.core.errors import LockTimeout
from tests.helpers import snapshot


class FollowingUnixFileLock:
    """What filelock 3.16-3.20.0's UnixFileLock does: open(O_RDWR | O_CREAT | O_TRUNC), following a symlink."""

    def __init__(self, lock_file: str, **_: object) -> None:
        self.lock_file = lock_file
        self.fd: int | None = None

    def acquire(self) -> None:
        self.fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        assert self.fd is not None
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


@pytest.fixture
def precious(tmp_path) -> Path:
    target = tmp_path / "precious.txt"
    target.write_text("do not truncate me\n")
    return target


def _link_lock(fixture_home: Path, name: str, target: Path) -> Path:
    lock = fixture_home / "sessions" / f"{name}.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(target)
    return lock


def test_a_symlinked_session_lock_is_refused_with_exit_5_and_its_target_untouched(cli, fixture_home, precious):
    lock = _link_lock(fixture_home, "my_chat.json", precious)
    before = snapshot(fixture_home)
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "New title")
    assert result.exit_code == 5
    assert result.stderr == (f"praisonmem: error: {lock}: is a symbolic link; praisonmem does not lock through "
                             "a link (remove it and retry); nothing changed\n")
    assert precious.read_text() == "do not truncate me\n"
    assert snapshot(fixture_home) == before and lock.is_symlink()


@pytest.mark.parametrize("filelock_like", ["installed", "3.16-3.20.0"])
def test_a_symlinked_lock_is_refused_whatever_filelock_does(cli, fixture_home, precious, monkeypatch,
                                                             filelock_like):
    """praisonmem checks the sidecar itself, so even a filelock that follows links never reaches the target."""
    if filelock_like != "installed":
        import filelock

        monkeypatch.setattr(filelock, "UnixFileLock", FollowingUnixFileLock)
    _link_lock(fixture_home, "my_chat.json", precious)
    result = cli("--home", fixture_home, "session", "delete", "my_chat", "--yes", "--force")
    assert (result.exit_code, result.stdout) == (5, "")
    assert "is a symbolic link" in result.stderr
    assert precious.read_text() == "do not truncate me\n"
    assert (fixture_home / "sessions" / "my_chat.json").exists()


def test_a_dangling_symlinked_session_lock_is_refused_and_creates_nothing(cli, fixture_home, tmp_path):
    missing = tmp_path / "nowhere" / "x"
    lock = _link_lock(fixture_home, "my_chat.json", missing)
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "t")
    assert result.exit_code == 5 and f"{lock}: is a symbolic link" in result.stderr
    assert not missing.parent.exists()


def test_a_lock_path_that_is_a_directory_is_refused_with_exit_5(cli, fixture_home):
    lock = fixture_home / "sessions" / "my_chat.json.lock"
    lock.unlink()
    lock.mkdir()
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "t")
    assert result.exit_code == 5
    assert result.stderr == f"praisonmem: error: {lock}: is a directory, not a lock file; nothing changed\n"


def _run(home: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRAISONAI_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "praisonmem", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("command", [["learn", "add", "persona", "Likes tea", "--user-id", "alice"],
                                     ["backup", "create", "-o", "BACKUPS"]])
def test_a_symlinked_learn_lock_is_refused_quickly_not_spun_on(fixture_home, tmp_path, command):
    store = fixture_home / "learn" / "private" / "alice" / "persona.json"
    lock = Path(f"{store}.lock")
    lock.symlink_to("/nonexistent")
    before = store.read_bytes()
    command = [str(tmp_path / "backups") if arg == "BACKUPS" else arg for arg in command]
    started = time.monotonic()
    result = _run(fixture_home, "--lock-timeout", "1", *command)
    assert time.monotonic() - started < 10
    assert result.returncode == 5, result.stderr
    *warnings, error = result.stderr.splitlines()  # backup warns first that there is no FileMemory dir
    assert all(line.startswith("praisonmem: warning: ") for line in warnings)
    assert error == (f"praisonmem: error: {lock}: is a symbolic link; praisonmem does not lock through "
                     "a link (remove it and retry); nothing changed")
    assert store.read_bytes() == before and lock.is_symlink()
    assert not (tmp_path / "backups").exists() or not any((tmp_path / "backups").iterdir())


def test_a_learn_lock_that_keeps_vanishing_still_times_out_and_sleeps(tmp_path, monkeypatch):
    """The create fails because the lock exists, but it is gone when looked at: wait, do not spin."""
    store = tmp_path / "learn" / "private" / "u" / "persona.json"
    store.parent.mkdir(parents=True)
    real_open = os.open
    opens = []

    def always_exists(path, flags, *args, **kwargs):
        if str(path).endswith("persona.json.lock"):
            opens.append(1)
            if len(opens) > 10_000:
                raise AssertionError("spinning: the lock wait does not sleep between tries")
            raise FileExistsError(17, "File exists", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", always_exists)
    started = time.monotonic()
    with pytest.raises(LockTimeout, match="for over 0.3s"):
        with learn.locked(store, timeout=0.3):
            pass
    assert 0.25 <= time.monotonic() - started < 2
    assert len(opens) <= 0.3 / learn.POLL + 5
