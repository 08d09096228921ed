"""What the throwaway MariaDB and Redis servers of the tests share (tests/mariadbserver.py,
tests/redisserver.py): an unprivileged OS user to run them as root, a free loopback port, the
watchdog that ends a server when pytest dies, and the skip-or-fail rule for a missing binary.

The servers run in the foreground (no daemon mode) in a process session of their own, so a
terminal's Ctrl-C reaches pytest and not them; each writes a pid file. The watchdog is started
before the server, holding a pipe from pytest: when the pipe closes (normal teardown, Ctrl-C,
pytest killed), it SIGKILLs the pid in the pid file (the data is throwaway: nothing to flush)
if that process is still the server binary, waits for it to go, and removes the server's dir.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


class ServerError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_os_user(name: str, what: str) -> None:
    """Create the system user ``name`` (no login, no home) unless it exists."""
    if subprocess.run(["getent", "passwd", name], capture_output=True).returncode == 0:
        return
    made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
                           "/nonexistent", "--shell", "/usr/sbin/nologin", name], capture_output=True, text=True)
    # another test run may have made it meanwhile
    if made.returncode != 0 and subprocess.run(["getent", "passwd", name], capture_output=True).returncode != 0:
        raise ServerError(f"cannot create the OS user {name} to run {what}: {made.stderr.strip()}")


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# argv: the server's dir, its pid file, the binary's name (a reused pid is left alone).
_WATCHDOG = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
root, pidfile, binary = sys.argv[1:]
def is_server(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            # a server may retitle itself ("redis-server 127.0.0.1:6379"): the first word is the binary
            argv0 = f.read().split(b"\0")[0].split(b" ")[0].decode(errors="replace")
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return os.path.basename(argv0) == binary and state not in ("Z", "X")
try:
    sys.stdin.buffer.read()
finally:
    try:
        with open(pidfile) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pid = None
    if pid and is_server(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        deadline = time.monotonic() + 30
        while is_server(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    shutil.rmtree(root, ignore_errors=True)
"""


def start_watchdog(root: Path, pidfile: Path, binary: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(root), str(pidfile), binary],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd="/", env=env)


def end_watchdog(watchdog: subprocess.Popen | None) -> None:
    if watchdog is None:
        return
    watchdog.stdin.close()
    try:
        watchdog.wait(timeout=60)
    except subprocess.TimeoutExpired:
        watchdog.kill()


def wait_gone(pid: int | None, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while pid is not None and alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid is None or not alive(pid)


def missing(env_require: str, message: str) -> None:
    """Skip the test, or fail it when ``env_require=1`` (CI) says the piece must be there."""
    if os.environ.get(env_require) == "1":
        pytest.fail(f"{env_require}=1 but {message}", pytrace=False)
    pytest.skip(message)
