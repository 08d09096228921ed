#!/usr/bin/env python3
"""praisonmem session list vs praisonaiagents' DefaultSessionStore.list_sessions.

Generates a PRAISONAI_HOME with N sessions of M messages each (in the library's
exact on-disk format), then times, in one run and on the same warm directory:

* ``praisonmem session list --json --limit 0`` as a subprocess (what a user runs);
* the library in a subprocess: import + ``DefaultSessionStore(...).list_sessions``;
* the library's ``list_sessions`` call alone, in-process (no import cost).

Each is run ``--repeat`` times; the median wall time and the peak RSS of the
subprocesses are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path


def make_home(root: Path, sessions: int, messages: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    sdir = root / "sessions"
    sdir.mkdir(parents=True)
    words = "weather hotel lisbon paris agent memory session tool answer question café 日本".split()
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(sessions):
        created = start + timedelta(minutes=i)
        msgs = []
        for j in range(messages):
            msgs.append({"role": "user" if j % 2 == 0 else "assistant",
                         "content": " ".join(rng.choice(words) for _ in range(rng.randint(5, 40))),
                         "timestamp": created.timestamp() + j * 1.5, "metadata": {}})
        doc = {"session_id": f"bench-{i:05}", "messages": msgs, "created_at": created.isoformat(),
               "updated_at": (created + timedelta(seconds=messages * 2)).isoformat(),
               "agent_name": f"Agent {i % 17}", "user_id": f"user{i % 5}",
               "metadata": {"model": "gpt-4o-mini", "total_tokens": 18 * messages, "cost": 0.0001,
                            "source": "chat"},
               "gateway_session_id": None, "agent_id": None, "runtime_state": {}, "archived_messages": [],
               "model": "gpt-4o-mini", "total_tokens": 18 * messages, "cost": 0.0001, "source": "chat"}
        with open(sdir / f"bench-{i:05}.json", "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=2, ensure_ascii=False)
    return root


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) and stdout of one subprocess."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.decode(errors='replace')}")
    return elapsed, _peak_rss_kib(), out


_rss_seen = 0


def _peak_rss_kib() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


LIBRARY = """
import json, sys
from praisonaiagents.session.store import DefaultSessionStore
rows = DefaultSessionStore(session_dir=sys.argv[1]).list_sessions(limit=10**9)
print(len(rows))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--messages", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the generated home")
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(prefix="praisonmem-bench-"))
    try:
        started = time.perf_counter()
        home = make_home(root / "home", args.sessions, args.messages)
        size = sum(p.stat().st_size for p in (home / "sessions").iterdir())
        print(f"generated {args.sessions} sessions x {args.messages} messages "
              f"({size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f}s at {home}")
        env = dict(os.environ, DO_NOT_TRACK="1", PRAISONAI_TELEMETRY_DISABLED="true", PRAISONAI_HOME=str(home))
        praisonmem = [sys.executable, "-m", "praisonmem", "session", "list", "--json", "--limit", "0"]
        library = [sys.executable, "-c", LIBRARY, str(home / "sessions")]

        # warm the page cache and check both see every session
        assert len(json.loads(timed(praisonmem, env)[2])) == args.sessions
        assert int(timed(library, env)[2]) == args.sessions

        results: dict[str, list[float]] = {"praisonmem": [], "library": []}
        for _ in range(args.repeat):
            results["praisonmem"].append(timed(praisonmem, env)[0])
            results["library"].append(timed(library, env)[0])
        rss = _peak_rss_kib()

        from praisonaiagents.session.store import DefaultSessionStore

        store = DefaultSessionStore(session_dir=str(home / "sessions"))
        inproc = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            store.list_sessions(limit=10**9)
            inproc.append(time.perf_counter() - t)

        pm, lib, call = (statistics.median(results["praisonmem"]), statistics.median(results["library"]),
                         statistics.median(inproc))
        print(f"{'':44}median of {args.repeat}")
        print(f"{'praisonmem session list --json --limit 0':44}{pm * 1000:8.0f} ms")
        print(f"{'library: import + list_sessions (process)':44}{lib * 1000:8.0f} ms")
        print(f"{'library: list_sessions call only (in-process)':44}{call * 1000:8.0f} ms")
        print(f"ratio praisonmem / library process: {pm / lib:.2f}; praisonmem / library call: {pm / call:.2f}")
        print(f"peak RSS of the largest subprocess: {rss / 1024:.0f} MiB")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
