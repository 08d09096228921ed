#!/usr/bin/env python3
"""Every row of the goals table (README.md, The rows), in one run: praisonmem against its reference.

Runs, on one data dir (generated once, reused with --dir): session_search,
session_list, memory_search, startup, backup_create, memory_store, check_home,
session_migrate, session_list_pg (these two on a throwaway PostgreSQL cluster,
against the real praisonai store in the oracle venv: --oracle-python),
session_list_mysql (on a throwaway MariaDB server, against the real praisonai
MySQLConversationStore in the oracle venv), locate, upsonic_sessions_redis (on a
throwaway redis-server, against Upsonic's RedisStorage);
then prints the goals table (medians, ratio, goal, pass/fail, noise). --quick
runs everything at small sizes with 2 rounds: a smoke test of the scripts, not a
measurement. Exits 1 when a script failed (a command failed or a result differed
from the reference); missed goals are reported, not an error (--strict: also exit 1).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
import traceback
from pathlib import Path

import _bench
import _data
import _pg
import session_list

SCRIPTS = ("session_search", "session_list", "memory_search", "startup", "backup_create", "memory_store",
           "check_home", "session_migrate", "session_list_pg", "session_list_mysql", "locate",
           "upsonic_sessions_redis")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _bench.add_common_args(ap, rounds=7)
    session_list.extra_args(ap)
    _pg.extra_args(ap)
    ap.add_argument("--only", type=lambda s: s.split(","), metavar="NAME,...", help=f"only these of {', '.join(SCRIPTS)}")
    ap.add_argument("--markdown", type=Path, metavar="FILE", help="also write the goals table as Markdown to FILE")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = ap.parse_args()
    unknown = set(args.only or ()) - set(SCRIPTS)
    if unknown:
        ap.error(f"unknown script(s): {', '.join(sorted(unknown))}")

    temp = None
    if args.dir:
        data_dir = args.dir.resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="praisonmem-bench-")
        data_dir = Path(temp.name)
    pm = _bench.praisonmem_cmd(args.praisonmem)
    env = _bench.environment(pm)
    print(f"{env['date']}  {env['cpu']} x{env['cpus']}  python {env['python']}  "
          f"{env['praisonmem']} at {env['code']} commit {env['commit'][:12]}{' (dirty)' if env['dirty'] else ''}  "
          f"data {data_dir}", file=sys.stderr)
    rows: list[_bench.Row] = []
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}
    started = time.perf_counter()
    try:
        for name in args.only or SCRIPTS:
            module = importlib.import_module(name)
            print(f"== {name}", file=sys.stderr)
            t = time.perf_counter()
            try:
                rows += module.body(_bench.Context(args, data_dir, module.ROUNDS))
            except (Exception, SystemExit) as exc:  # report it, run the other rows
                errors[name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                print(f"{name} FAILED: {errors[name]}", file=sys.stderr)
            timings[name] = round(time.perf_counter() - t, 1)
            print(f"   {name}: {timings[name]:.0f} s", file=sys.stderr)
    finally:
        if temp:
            temp.cleanup()
    total = time.perf_counter() - started
    print(_bench.table(rows))
    for name, error in errors.items():
        print(f"{name}: FAILED: {error}")
    print(f"{len(rows)} rows, {sum(r.passed for r in rows)} goals met, {total / 60:.1f} min")
    if args.json:
        _bench.write_json(args.json, rows, total, {"script_seconds": timings, "errors": errors, "quick": args.quick}, pm=pm)
    if args.markdown:
        args.markdown.write_text(_bench.markdown_table(rows) + "\n", encoding="utf-8")
    if errors:
        return 1
    return 1 if args.strict and not all(r.passed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
