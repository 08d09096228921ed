#!/usr/bin/env python3
"""Write the README's tour: the real output of its commands against examples/home, on an 80-column terminal.

Each command runs from a fresh copy of ``examples/`` (so the README's paths work as written) on a
pseudo-terminal of 80 x 40, in UTC, with a private HOME and no PraisonAI or praisonmem environment; the
escape sequences of its styles are removed, nothing else is changed. ``--check`` exits 1 when the README's
tour differs from a fresh run (the docs test runs it), without it the README is rewritten.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
BEGIN, END = "<!-- tour: begin (scripts/gen_readme_tour.py writes it) -->", "<!-- tour: end -->"

# (what the paragraph above the output says, the command as a reader types it from the repository root)
TOUR = [
    ("Every session of the home, newest first, in every store it keeps them in:",
     'praisonmem --home examples/home session list --limit 6'),
    ("The end of one session as a transcript (a compacted one: 5 turns archived, a checkpoint):",
     "praisonmem --home examples/home session show compacted-demo --tail 2"),
    ("A search over active and archived turns of every session:",
     'praisonmem --home examples/home session search "hotel alfama"'),
    ("What an upgrade left behind, and the command that fixes each finding:",
     "praisonmem --home examples/home check examples/home"),
]

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# The directory the commands run in: its path shows in check's findings (the workspace id), so it is fixed.
WORKDIR = Path(tempfile.gettempdir()) / f"praisonmem-tour-{os.getuid()}"


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRAISONAI", "PRAISONMEM", "MEM0"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
               COLUMNS="80", LINES="40", TZ="UTC", NO_COLOR="1", TERM="xterm", LANG="C.UTF-8",
               PYTHONPATH=str(REPO))
    return env


def on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run argv with stdin, stdout and stderr on one pseudo-terminal; its exit code and what it showed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every holder of the terminal has closed it
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = process.wait()
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    return code, "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def render() -> str:
    # Two runs at once (a test and a regeneration) would share WORKDIR: the second waits for the first.
    with open(f"{WORKDIR}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _render_locked()


def _render_locked() -> str:
    shutil.rmtree(WORKDIR, ignore_errors=True)
    try:
        shutil.copytree(REPO / "examples", WORKDIR / "examples")
        (WORKDIR / "user").mkdir()
        env = environment(WORKDIR / "user")
        parts = []
        for said, command in TOUR:
            argv = shlex.split(command)
            code, shown = on_a_terminal([sys.executable, "-m", "praisonmem", *argv[1:]], WORKDIR, env)
            if code != 0:
                raise SystemExit(f"gen_readme_tour: {command!r} exited {code}:\n{shown}")
            parts.append(f"{said}\n\n```console\n$ {command}\n{shown}\n```\n")
        return "\n".join(parts)
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's tour is not a fresh run's")
    args = parser.parse_args()
    readme = README.read_text(encoding="utf-8")
    head, _, rest = readme.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if not rest or not tail and END not in rest:
        print(f"gen_readme_tour: README.md has no {BEGIN} ... {END} section", file=sys.stderr)
        return 2
    fresh = f"{head}{BEGIN}\n{render()}{END}{tail}"
    if args.check:
        if fresh != readme:
            print("gen_readme_tour: README.md's tour differs from a fresh run; run scripts/gen_readme_tour.py",
                  file=sys.stderr)
            return 1
        return 0
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
