#!/usr/bin/env python3
"""praisonmem memory search vs praisonaiagents' FileMemory(...) + search, 100,000 items.

Writes one FileMemory user (default: 20k short-term, 60k long-term, 10k entities,
10k episodic items over the last 7 days) in the library's exact format, then
times, on the same warm files and in one run:

* ``praisonmem memory search QUERY --json`` as a subprocess (what a user runs);
* the library in a subprocess: import + ``FileMemory(user_id=...)`` + ``search``;
* ``FileMemory(user_id=...)`` construction + ``search`` in-process (no import).

Each query is run ``--repeat`` times; medians are reported, and the result lists
are checked to be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

WORDS = ("dark mode editor tea green Lisbon trip hotel user prefers café 日本 python rust note meeting "
         "deadline friday project alpha beta").split()
QUERIES = ["dark mode", "Lisbon hotel", "zebra", "tea"]


def item(rng: random.Random, i: int, importance: float) -> dict:
    content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
    created = 1796000000.0 + i
    return {"id": hashlib.sha256(f"{content}{i}".encode()).hexdigest()[:16], "content": content, "metadata": {},
            "created_at": created, "updated_at": created, "access_count": 0, "importance": importance}


def write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)


def make_user(project: Path, short: int, long: int, entities: int, episodic: int) -> None:
    rng = random.Random(7)
    user = project / ".praisonai" / "memory" / "bench"
    write(user / "config.json", {"short_term_limit": short, "long_term_limit": long, "episodic_retention_days": 30,
                                 "enable_summarization": False, "summarization_threshold": 50,
                                 "importance_threshold": 0.7, "auto_promote": True})
    write(user / "short_term.json", [item(rng, i, 0.5) for i in range(short)])
    write(user / "long_term.json", [item(rng, i, rng.choice([0.6, 0.8, 0.9])) for i in range(long)])
    write(user / "entities.json", {f"e{i:06}": {"id": f"e{i:06}", "name": rng.choice(WORDS) + str(i),
                                                "entity_type": "thing", "attributes": {"note": rng.choice(WORDS)},
                                                "relationships": [], "created_at": 1.0, "updated_at": 1.0}
                                   for i in range(entities)})
    per_day = episodic // 7
    for day in range(7):
        date = (datetime.now() - timedelta(days=day)).strftime("%Y-%m-%d")
        write(user / "episodic" / f"{date}.json", [item(rng, i, 0.5) for i in range(per_day)])


LIBRARY = """
import json, sys
from praisonaiagents.memory.file_memory import FileMemory
print(json.dumps(FileMemory(user_id="bench").search(sys.argv[1], limit=10)))
"""


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {proc.stderr}")
    return time.perf_counter() - started, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", type=int, default=20_000)
    ap.add_argument("--long", type=int, default=60_000)
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--episodic", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="praisonmem-membench-"))
    try:
        make_user(root, args.short, args.long, args.entities, args.episodic)
        total = args.short + args.long + args.entities + args.episodic
        size = sum(p.stat().st_size for p in root.rglob("*.json"))
        print(f"{total} items ({size / 1e6:.1f} MB) in {root}")
        env = dict(os.environ, DO_NOT_TRACK="1", PRAISONAI_TELEMETRY_DISABLED="true", HOME=str(root))
        from praisonaiagents.memory.file_memory import FileMemory

        os.chdir(root)
        print(f"{'query':16}{'praisonmem':>12}{'library proc':>14}{'library call':>14}{'ratio proc':>12}{'ratio call':>12}")
        for query in QUERIES:
            ours, theirs, calls = [], [], []
            for _ in range(args.repeat):
                t, out_ours = timed([sys.executable, "-m", "praisonmem", "memory", "search", query, "--json",
                                     "--user-id", "bench"], root, env)
                ours.append(t)
                t, out_lib = timed([sys.executable, "-c", LIBRARY, query], root, env)
                theirs.append(t)
                started = time.perf_counter()
                FileMemory(user_id="bench").search(query, limit=10)
                calls.append(time.perf_counter() - started)
            a, b = json.loads(out_ours), json.loads(out_lib)
            assert [(h["type"], h["item"]["id"], h["score"]) for h in a] == \
                [(h["type"], h["item"]["id"], h["score"]) for h in b], query
            pm, lib, call = statistics.median(ours), statistics.median(theirs), statistics.median(calls)
            print(f"{query:16}{pm * 1000:10.0f}ms{lib * 1000:12.0f}ms{call * 1000:12.0f}ms{pm / lib:12.2f}{pm / call:12.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
