#!/usr/bin/env python3
"""praisonmem session list vs DefaultSessionStore.list_sessions, and the raw-parse floor.

For each size (default 1,000 / 10,000 / 100,000 sessions x 20 messages), in
interleaved rounds on the same files (OS page cache warm in every case):

* praisonmem cold: ``session list --json --limit 0`` right after praisonmem's cache
  dirs are deleted; then praisonmem warm: the same command again (second run);
* library: a process doing import + ``DefaultSessionStore(session_dir=...).list_sessions``
  (printing the count);
* library call: ``list_sessions`` alone, in this process (no import);
* floor serial / floor pool: the raw-parse floor (see README), serial and in a fork pool;
  the floor is the faster of the two.

Goals (README.md, The rows): warm >= 4x faster than the library process (ratio <= 0.25) at each
size; cold <= 1.1 x the floor. Checked: the listed sessions, in order, with every field
both print, equal the library's; every praisonmem run prints the same bytes.
"""

from __future__ import annotations

import json
import sys

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (100, 1_000)
FIELDS = ("session_id", "agent_name", "title", "created_at", "updated_at", "message_count", "model",
          "total_tokens", "cost", "agent_id", "source", "parent_id")

# Timed: prints only the count (json-encoding 10,000 rows in Python would add ~25 % to the
# library's time); the rows are compared once, untimed, with LIBRARY_ROWS.
LIBRARY = """
import sys
from praisonaiagents.session.store import DefaultSessionStore
print(len(DefaultSessionStore(session_dir=sys.argv[1]).list_sessions(limit=10**9)))
"""
LIBRARY_ROWS = """
import json, sys
from praisonaiagents.session.store import DefaultSessionStore
rows = DefaultSessionStore(session_dir=sys.argv[1]).list_sessions(limit=10**9)
print(json.dumps([[row.get(k) for k in sys.argv[2].split(",")] for row in rows]))
"""


def body(ctx: Context) -> list[Row]:
    sizes = ctx.args.sizes or (QUICK_SIZES if ctx.quick else SIZES)
    rows: list[Row] = []
    for size in sizes:
        rows += measure(ctx, size)
    return rows


def measure(ctx: Context, size: int) -> list[Row]:
    from praisonaiagents.session.store import DefaultSessionStore

    home = _data.session_home(ctx.data_dir, size)
    _data.tidy_home(home)
    sessions = str(home / "sessions")
    argv = ("session", "list", "--json", "--limit", "0")
    print(f"session list, {size} sessions ({_data.tree_size(home) / 1e6:.0f} MB), {_bench.load_line()}",
          file=sys.stderr)

    _data.wipe_caches(ctx.data_dir)
    expected = ctx.pm_run(*argv, home=home).stdout
    ours = [[row.get(k) for k in FIELDS] for row in json.loads(expected)]
    theirs = json.loads(ctx.py_run(LIBRARY_ROWS, sessions, ",".join(FIELDS)).stdout)
    assert len(ours) == size, (len(ours), size)
    assert ours == theirs, f"session list differs from list_sessions at {size} sessions"

    def praisonmem() -> dict[str, Sample]:
        _data.wipe_caches(ctx.data_dir)
        cold = ctx.pm_run(*argv, home=home)
        warm = ctx.pm_run(*argv, home=home)
        assert cold.stdout == expected and warm.stdout == expected, "session list output changed between runs"
        return {"praisonmem cold": cold.sample, "praisonmem warm": warm.sample}

    def library() -> dict[str, Sample]:
        result = ctx.py_run(LIBRARY, sessions)
        assert int(result.stdout) == size
        return {"library": result.sample}

    def library_call() -> dict[str, Sample]:
        sample, listed = _bench.in_process(lambda: DefaultSessionStore(session_dir=sessions).list_sessions(limit=10**9))
        assert len(listed) == size
        return {"library call": sample}

    def floor(mode: str) -> _bench.Case:
        def case() -> dict[str, Sample]:
            result = ctx.py_run(_bench.FLOOR, sessions, mode)
            assert int(result.stdout) == size
            return {f"floor {mode}": result.sample}
        return case

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, library, library_call, floor("serial"), floor("pool")], ctx.rounds)
    best = _bench.floor_label(samples)
    details = _bench.details(samples, load_before, sessions=size, floor_used=best, output_sha256=ctx.digest(expected))
    checked = "ordered session list, 12 fields, = list_sessions"
    warm = _bench.ratio_row(f"session list warm, {size:,}", samples, "praisonmem warm", "library", 0.25,
                            checked=checked, details=details)
    cold = _bench.ratio_row(f"session list cold, {size:,} (vs floor)", samples, "praisonmem cold", "floor", 1.10,
                            checked=checked, details={"floor_used": best})
    return [warm, cold]


def extra_args(ap) -> None:
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), metavar="N,N,...",
                    help=f"session counts (default {','.join(map(str, SIZES))})")


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body, extra_args)
