#!/usr/bin/env python3
"""Ctrl-C at random points of ``praisonmem session list`` and ``session export``: how each run ended, counted.

Starts ``praisonmem --home HOME session list`` and ``session export --all -o FILE`` (in turn, ``--command``
picks one) again and again, each in its own process group as a terminal's foreground job, sends SIGINT to
the group a random delay (``--min-delay`` to ``--max-delay`` s) after praisonmem's entry point was reached (a
signal while Python itself is still starting, or in this launcher's own two lines before the entry point's
first, is Python's to report) and counts the exit codes: 130 (interrupted, the one clean ending) and 0
(finished first) are right; anything else is a bug (-11: a crash, SIGSEGV). Exits 1 when any run ended
otherwise. ``export`` is the command whose first JSON import is orjson's own, so it has the longer window.

    python scripts/interrupt_storm.py --runs 200              # on a copy of the test fixtures' home
    python scripts/interrupt_storm.py --home ~/.praisonai --command export --runs 500 --seed 7
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_HOME = ROOT / "tests" / "fixtures" / "praisonai-1.7.17" / "home"
CLEAN = {130, 0}
# The console script's entry point, run once the interpreter has started; it says so on a pipe first.
LAUNCH = ("import os, sys\n"
          "from praisonmem.__main__ import entry\n"
          "ready, sys.argv = int(sys.argv[1]), ['praisonmem', *sys.argv[2:]]\n"
          "os.write(ready, b'r')\n"
          "entry()\n")


def one_run(home: Path, args: list[str], delay: float) -> tuple[int, str]:
    """(exit code, last stderr line) of ``praisonmem --home HOME args`` interrupted after ``delay`` s."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    ready, tell = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(tell), "--home", str(home), *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                start_new_session=True, pass_fds=(tell,))
    finally:
        os.close(tell)
    with os.fdopen(ready, "rb") as pipe:
        pipe.read(1)  # b"r", or b"" if it died first
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass  # finished and reaped already
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return -9, "hung"
    lines = err.decode(errors="replace").strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--min-delay", type=float, default=0.005, help="earliest SIGINT, in seconds (default 0.005)")
    ap.add_argument("--max-delay", type=float, default=0.08, help="latest SIGINT, in seconds (default 0.08)")
    ap.add_argument("--command", choices=("both", "list", "export"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--home", type=Path, help="the home to list (default: a copy of the test fixtures' home)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="praisonmem-storm-") as scratch:
        home = args.home
        if home is None:
            home = Path(scratch) / "home"
            shutil.copytree(FIXTURE_HOME, home)
        commands = {"list": ["session", "list"],
                    "export": ["session", "export", "--all", "-o", str(Path(scratch) / "all.json")]}
        names = list(commands) if args.command == "both" else [args.command]
        codes: dict[str, collections.Counter[int]] = {name: collections.Counter() for name in names}
        odd: list[str] = []
        for i in range(args.runs):
            name = names[i % len(names)]
            delay = rng.uniform(args.min_delay, args.max_delay)
            code, last = one_run(home, commands[name], delay)
            codes[name][code] += 1
            if code not in CLEAN:
                odd.append(f"run {i} ({name}) at {delay * 1000:.1f} ms: exit {code} {last!r}")
    for name, counted in codes.items():
        print(f"{name}: " + ", ".join(f"exit {code}: {count}" for code, count in sorted(counted.items())))
    for line in odd:
        print(line)
    return 1 if odd else 0


if __name__ == "__main__":
    sys.exit(main())
