"""Ctrl-C: SIGINT to the whole process group, as a terminal sends it, at seeded random
points of list, search, check, export and backup over 2,000 sessions (the fork pool in use), during
start-up imports, and at a confirmation prompt. Every run: exit 130, exactly one stderr line, no
traceback, and no process of its group left behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import snapshot

SESSIONS = 2000
RUNS = 50
SEED = 14
INTERRUPTED = "praisonmem: error: interrupted\n"
FIRST = 0.005  # the earliest point after the entry point is reached (the launcher's own two lines come first)


@pytest.fixture(scope="module")
def big_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("interrupt") / "home"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    words = "weather hotel lisbon paris agent memory session tool answer question".split()
    rng = random.Random(SEED)
    for i in range(SESSIONS):
        doc = {"session_id": f"s{i:05}", "agent_name": f"Agent {i % 7}", "user_id": f"u{i % 3}",
               "created_at": "2026-11-01T00:00:00+00:00", "updated_at": "2026-11-02T00:00:00+00:00",
               "messages": [{"role": "user" if j % 2 == 0 else "assistant",
                             "content": " ".join(rng.choice(words) for _ in range(60)),
                             "timestamp": 1796000000.0 + j, "metadata": {}} for j in range(12)]}
        (sessions / f"s{i:05}.json").write_text(json.dumps(doc, indent=2))
    return home


def commands(home: Path, out: Path) -> dict[str, list[str]]:
    return {
        "list": ["--home", str(home), "session", "list", "--limit", "0"],
        "search": ["--home", str(home), "session", "search", "lisbon paris", "--limit", "0"],
        "check": ["check", str(home)],
        "export": ["--home", str(home), "session", "export", "--all", "-o", str(out / "all.json")],
        "backup": ["--home", str(home), "backup", "create", "--output", str(out / "backups"),
                   "--include", "sessions"],
    }


def env() -> dict[str, str]:
    # No cache: every run does the whole work, so a point chosen from the timed run falls inside the next one.
    return {**os.environ, "PRAISONMEM_CACHE": "false", "PYTHONUNBUFFERED": "1"}


# The console script's own entry point, run once the interpreter itself has started: the clock of a run
# starts there, because a Ctrl-C while Python is still starting (site, runpy; ~15 ms) comes before any
# line of praisonmem and is Python's to report.
LAUNCH = ("import os, sys\n"
          "from praisonmem.__main__ import entry\n"
          "ready, sys.argv = int(sys.argv[1]), ['praisonmem', *sys.argv[2:]]\n"
          "os.write(ready, b'r')\n"
          "entry()\n")


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    """praisonmem as a terminal's foreground job: its own process group (the test is not in it); returns
    once the interpreter has started and praisonmem's entry point is about to run."""
    ready, tell = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(tell), *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env(), cwd=cwd,
                                start_new_session=True, pass_fds=(tell,))
    finally:
        os.close(tell)
    with os.fdopen(ready, "rb") as pipe:
        pipe.read(1)  # b"r", or b"" if it died first (the test then sees its exit)
    return proc


LEFT: list[str] = []  # what a failed group_gone found, for the failure message


def members(pgid: int) -> list[tuple[int, str, str]]:
    """(pid, state, command) of every process in group ``pgid`` that has not exited (a zombie has: it runs
    nothing and holds no pipe, it only waits for init to reap it)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append((int(entry), fields[0], stat[stat.index("(") + 1:stat.rindex(")")]))
    return found


def group_gone(pgid: int, wait: float = 5.0) -> bool:
    deadline = time.monotonic() + wait
    while found := members(pgid):
        if time.monotonic() > deadline:
            LEFT[:] = [str(m) for m in found]
            try:
                os.killpg(pgid, signal.SIGKILL)  # leave nothing behind for the next test, then fail this one
            except ProcessLookupError:
                pass
            return False
        time.sleep(0.02)
    return True


def interrupt_at(args: list[str], delay: float, cwd: Path) -> tuple[int | None, str, bool]:
    """Start ``args``, SIGINT its process group after ``delay`` s; (exit code, stderr, group gone), or
    ``None`` for the code when it had finished before the signal."""
    proc = start(args, cwd)
    time.sleep(delay)
    if proc.poll() is not None:
        proc.communicate()
        return None, "", group_gone(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        return -9, stderr, False
    return proc.returncode, stderr, group_gone(proc.pid)


def timed(args: list[str], cwd: Path) -> float:
    started = time.monotonic()
    proc = start(args, cwd)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 or args[0] == "check", stderr
    return time.monotonic() - started


def test_ctrl_c_at_random_points_is_always_clean(big_home, tmp_path):
    """50 SIGINTs spread over five commands, each at a seeded random point between start-up and the end
    of the timed run (a run that finished first is tried again earlier, so 50 land)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    cmds = commands(big_home, out)
    durations = {name: timed(args, cwd) for name, args in cmds.items()}
    for path in out.rglob("*"):  # the timed runs' results: the interrupted ones must add nothing
        if path.is_file():
            path.unlink()
    before = snapshot(big_home)
    rng = random.Random(SEED)
    landed: list[tuple[str, float]] = []
    for i in range(RUNS):
        name = list(cmds)[i % len(cmds)]
        delay = rng.uniform(FIRST, durations[name] * 0.9)
        for _ in range(8):
            code, stderr, gone = interrupt_at(cmds[name], delay, cwd)
            assert gone, f"{name} at {delay:.3f}s left a process in its group: {LEFT}"
            finished = code is None or code == 0 or (name == "check" and code == 1 and stderr == "")
            if not finished:
                break
            delay = max(FIRST, delay / 2)  # it finished before the signal (a faster run than timed): earlier
        assert (code, stderr) == (130, INTERRUPTED), f"{name} at {delay:.3f}s: exit {code}, stderr {stderr!r}"
        landed.append((name, delay))
    assert len(landed) == RUNS and snapshot(big_home) == before
    leftovers = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith("praisonmem-backup-")]
    assert leftovers == [] or all(p.name == "all.json" for p in leftovers)  # a finished export, never a partial
    for path in leftovers:
        json.loads(path.read_text())


@pytest.mark.parametrize("delay", [0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06])
def test_ctrl_c_during_start_up_imports_is_clean(fixture_home, tmp_path, delay):
    """From the first line of praisonmem's entry point on: its imports (Typer, Rich, the command module)."""
    code, stderr, gone = interrupt_at(["--home", str(fixture_home), "session", "list", "--json"], delay, tmp_path)
    assert gone
    as_json = '{"error": {"code": "interrupted", "message": "interrupted", "exit_code": 130}}\n'
    assert code in (None, 0) or (code, stderr) == (130, as_json), (code, stderr)


def test_ctrl_c_at_a_confirmation_prompt_is_clean(fixture_home, tmp_path):
    import pty
    import select

    before = snapshot(fixture_home)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(fixture_home), "session", "delete",
                             "my_chat"], stdin=slave, stdout=slave, stderr=slave, env=env(), cwd=tmp_path,
                            start_new_session=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"[y/N]" not in seen:
        assert time.monotonic() < deadline, seen
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            seen += os.read(master, 4096)
    os.killpg(proc.pid, signal.SIGINT)
    code = proc.wait(timeout=30)
    rest = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        rest += chunk
    os.close(master)
    text = rest.decode("utf-8", "replace")
    assert code == 130 and "Traceback" not in text
    # What follows "[y/N]" on the terminal: the rest of the prompt (": ", the echoed ^C), then the one line.
    lines = [line.strip(" :^C") for line in text.replace("\r", "").split("\n")]
    assert [line for line in lines if line] == ["praisonmem: error: interrupted"], text
    assert group_gone(proc.pid) and snapshot(fixture_home) == before
