#!/usr/bin/env python3
"""Two versions of praisonmem's code doing the same work, interleaved, on this machine: is the newer slower?

The goals table compares praisonmem with its references; a regression between two commits is
better seen directly, on one machine, in one run: each row runs the same command line with
BEFORE's code and AFTER's (``git archive`` of the package into a temp dir, byte-compiled as an
installed wheel is), alternating which goes first, and reports the medians of wall and CPU time
(the children's user + system time, which load disturbs less than wall time) and their ratio
after/before. Outputs of the read rows are asserted identical between the two versions.

    python benchmarks/versus.py aa96b5f                # that commit against the work tree's HEAD
    python benchmarks/versus.py aa96b5f main --rounds 15 --only list
    python benchmarks/versus.py HEAD~3 HEAD --dir /tmp/bench-data --json versus.json

Rows: session search (many hits, none; warm, whole: with an index earlier runs completed, and cold: praisonmem's
cache emptied first), session list cold and warm at 1,000 and 10,000
sessions, check of the 10,000-session home, memory search (many hits, none) and memory store
on the 100,000-item user, start-up (workspace id, session show, session list) on a copy of
examples/home, backup create of the 10,000-session home; ``--only WORD`` keeps the rows whose
name holds WORD.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _bench
import _data

PY = sys.executable


def checkout(rev: str, into: Path) -> Path:
    """The package as it is at ``rev``, byte-compiled, under ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(_data.REPO), "archive", rev, "praisonmem"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    compileall.compile_dir(str(into), quiet=1)
    return into


class Version:
    """One version's code and its own cache dirs (so one version's cache never serves the other)."""

    def __init__(self, name: str, code: Path, data_dir: Path) -> None:
        self.name = name
        self.env = _data.isolated_env(data_dir, PYTHONPATH=str(code))
        for key in ("XDG_CACHE_HOME", "PRAISONMEM_CACHE_DIR"):
            self.env[key] = str(data_dir / f"versus-{name}" / key.lower())

    def settled_env(self, tag: str) -> dict[str, str]:
        """An environment with caches of its own (``tag``), which :meth:`wipe` leaves alone."""
        return {**self.env, **{key: f"{self.env[key]}-{tag}" for key in ("XDG_CACHE_HOME", "PRAISONMEM_CACHE_DIR")}}

    def wipe(self) -> None:
        for key in ("XDG_CACHE_HOME", "PRAISONMEM_CACHE_DIR"):
            shutil.rmtree(self.env[key], ignore_errors=True)

    def run(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run([PY, "-m", "praisonmem", *argv], env=env or self.env, cwd=cwd, capture_output=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"{self.name}: praisonmem {' '.join(argv)} exited {proc.returncode}: "
                             f"{proc.stderr.decode(errors='replace')[-300:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, proc.stdout


Row = Callable[[Version], tuple[float, float, bytes]]


def rows(data_dir: Path, quick: bool) -> dict[str, tuple[Row, bool]]:
    """Each row: what it runs with a version, and whether its output must be the same for both."""
    big = 1_000 if quick else 10_000
    h_big, h_small = _data.session_home(data_dir, big), _data.session_home(data_dir, 1_000 if not quick else 200)
    memory = _data.memory_project(data_dir, **(_data.MEMORY_QUICK if quick else _data.MEMORY_FULL))
    store = _data.scratch(data_dir, "versus-store")
    shutil.copytree(_data.memory_user_dir(memory), _data.memory_user_dir(store))
    pristine, target = _data.memory_user_dir(memory) / "long_term.json", _data.memory_user_dir(store) / "long_term.json"
    example = _data.scratch(data_dir, "versus-example-home")
    shutil.rmtree(example)
    shutil.copytree(_data.EXAMPLE_HOME, example)
    cwd = _data.scratch(data_dir, "cwd")
    backup = data_dir / "scratch" / "versus-backup.tar.gz"

    def on(home: Path, *argv: str, at: Path = cwd) -> Row:
        return lambda v: v.run(["--home", str(home), *argv], at)

    def cold(home: Path, *argv: str) -> Row:
        argv = argv or ("session", "list", "--json", "--limit", "0")
        return lambda v: (v.wipe(), v.run(["--home", str(home), *argv], cwd))[1]

    filled: set[tuple[str, str]] = set()

    def whole(home: Path, *argv: str) -> Row:
        """The command run with caches of its own that earlier runs of it filled: before the first timed run it is
        run until a run leaves those caches as they were (an index a search builds over several runs is whole)."""
        def row(v: Version) -> tuple[float, float, bytes]:
            env, line = v.settled_env("whole"), ["--home", str(home), *argv]
            if (v.name, " ".join(argv)) not in filled:
                for _ in range(32):
                    before = _tree(Path(env["PRAISONMEM_CACHE_DIR"]))
                    v.run(line, cwd, env)
                    if _tree(Path(env["PRAISONMEM_CACHE_DIR"])) == before:
                        break
                filled.add((v.name, " ".join(argv)))
            return v.run(line, cwd, env)
        return row

    def store_long(v: Version) -> tuple[float, float, bytes]:
        shutil.copyfile(pristine, target)
        return v.run(["memory", "store", "benchmark note: prefers dark mode", "--long", "--user-id", _data.USER], store)

    def backup_create(v: Version) -> tuple[float, float, bytes]:
        backup.unlink(missing_ok=True)
        wall, cpu, _ = v.run(["--home", str(h_big), "backup", "create", "--include", "sessions", "-o", str(backup)], cwd)
        return wall, cpu, b""

    n, m = f"{big:,}", f"{1_000 if not quick else 200:,}"
    return {
        'session search "paris weather"': (on(h_big, "session", "search", "paris weather", "--json"), True),
        'session search "zebra"': (on(h_big, "session", "search", "zebra", "--json"), True),
        'session search "paris weather" whole': (whole(h_big, "session", "search", "paris weather", "--json"), True),
        'session search "zebra" whole': (whole(h_big, "session", "search", "zebra", "--json"), True),
        'session search "paris weather" cold': (cold(h_big, "session", "search", "paris weather", "--json"), True),
        'session search "zebra" cold': (cold(h_big, "session", "search", "zebra", "--json"), True),
        f"session list cold, {m}": (cold(h_small), True),
        f"session list warm, {m}": (on(h_small, "session", "list", "--json", "--limit", "0"), True),
        f"session list cold, {n}": (cold(h_big), True),
        f"session list warm, {n}": (on(h_big, "session", "list", "--json", "--limit", "0"), True),
        f"check, {n}-session home": (lambda v: v.run(["check", str(h_big), "--json"], cwd), True),
        'memory search "dark mode"': (lambda v: v.run(["memory", "search", "dark mode", "--json", "--user-id", _data.USER], memory), True),
        'memory search "zebra"': (lambda v: v.run(["memory", "search", "zebra", "--json", "--user-id", _data.USER], memory), True),
        "memory store --long": (store_long, False),
        "start-up: workspace id": (lambda v: v.run(["workspace", "id"], cwd), True),
        "start-up: session show": (on(example, "session", "show", _data.SMALL_SESSION), True),
        "start-up: session list --json": (on(example, "session", "list", "--json"), True),
        f"backup create, {n}-session home": (backup_create, False),
    }


def _tree(top: Path) -> list[tuple[str, int, int]]:
    """Every file under ``top``: its path, size and mtime."""
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in top.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", help="the older commit (anything git rev-parse takes)")
    ap.add_argument("after", nargs="?", default="HEAD", help="the newer commit (default HEAD)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 9; --quick: 2)")
    ap.add_argument("--only", action="append", metavar="WORD", help="only the rows whose name holds WORD (repeatable)")
    ap.add_argument("--dir", type=Path, help="data dir (generated data is kept and reused there); default a temp dir")
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 rounds: a smoke test, not a measurement")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every run's figures as JSON to FILE")
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 9)
    with tempfile.TemporaryDirectory(prefix="praisonmem-versus-") as temp:
        data_dir = (args.dir or Path(temp) / "data").resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        versions = [Version(name, checkout(rev, Path(temp) / name), data_dir)
                    for name, rev in (("before", args.before), ("after", args.after))]
        table = {name: row for name, row in rows(data_dir, args.quick).items()
                 if not args.only or any(word in name for word in args.only)}
        print(f"{_bench.environment()['cpu']}: {args.before} vs {args.after}, {rounds} rounds, load {_bench.load_line()}",
              file=sys.stderr)
        for version in versions:  # a warm-up round: bytecode, page cache, praisonmem's caches
            for row, _ in table.values():
                row(version)
        runs: dict[str, dict[str, list[tuple[float, float]]]] = {name: {"before": [], "after": []} for name in table}
        for i in range(rounds):
            for name, (row, same) in table.items():
                outputs = {}
                for version in versions if i % 2 == 0 else versions[::-1]:
                    wall, cpu, out = row(version)
                    runs[name][version.name].append((wall, cpu))
                    outputs[version.name] = out
                if same and outputs["before"] != outputs["after"]:
                    raise SystemExit(f"{name}: the two versions' outputs differ")
            print(f"  round {i + 1}/{rounds}, load {_bench.load_line()}", file=sys.stderr, flush=True)
    print(f"{'work':34s} {'wall before':>11s} {'after':>8s} {'ratio':>6s}   {'cpu before':>10s} {'after':>8s} {'ratio':>6s}")
    summary = {}
    for name, by in runs.items():
        (bw, bc), (aw, ac) = ((statistics.median(w for w, _ in by[v]), statistics.median(c for _, c in by[v]))
                              for v in ("before", "after"))
        summary[name] = {"wall": [bw, aw, aw / bw], "cpu": [bc, ac, ac / bc], "runs": by}
        print(f"{name:34s} {bw * 1000:9.0f}ms {aw * 1000:6.0f}ms {aw / bw:6.3f}   {bc * 1000:8.0f}ms {ac * 1000:6.0f}ms "
              f"{ac / bc:6.3f}")
    if args.json:
        args.json.write_text(json.dumps({"before": args.before, "after": args.after, "rounds": rounds,
                                         "environment": _bench.environment(), "rows": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
