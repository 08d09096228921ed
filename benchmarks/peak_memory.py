"""Peak memory: how much RSS a command reaches, against the size of what it reads.

Not a timed benchmark: each command runs ``--rounds`` times (median reported, wall time beside it) as a
subprocess of this script, and its peak RSS is what ``/usr/bin/time -f %M`` reports (the process
and every descendant it reaped, e.g. fork-pool workers: the largest single process). Two data sets,
generated once under ``--dir`` (default: a temp dir, removed at the end):

* a home of ~100 MB: 2,000 sessions of ~50 KB each (``--home-mb`` scales it);
* a home holding one ~63 MiB session (``--session-mb``) and a small one.

Rows: ``session export --all`` (to a file, to stdout, as jsonl), ``session search`` (all hits, and the
default 20), ``session list``, and for the big session ``export`` (json, jsonl, markdown), ``rename --title``,
``rename`` to a new id (and back, unmeasured), ``search`` and ``show --tail 5``; each with its peak, the largest
input file and the ratio (``--rows big``: the big session's rows only; ``--only WORD``: the rows naming it). With ``--before CMD`` every row also runs
CMD (another checkout: ``"env PYTHONPATH=/path/to/old python -m praisonmem"``), its rounds interleaved with
this one's, so both see the same load. Run from the repository root with the venv's python::

    python benchmarks/peak_memory.py
    python benchmarks/peak_memory.py --dir /tmp/peak --json peak.json --rows big --rounds 3 --before "..."
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORDS = "weather hotel lisbon paris agent memory session tool answer question café 日本".split()
MB = 1 << 20
TIME = "/usr/bin/time"  # Debian package "time"


def _session(rng: random.Random, sid: str, messages: int, words: int) -> dict:
    return {"session_id": sid, "agent_name": "Bench", "user_id": "u", "created_at": "2026-11-01T00:00:00+00:00",
            "updated_at": "2026-11-02T00:00:00+00:00", "metadata": {"title": "bench"},
            "messages": [{"role": "user" if j % 2 == 0 else "assistant",
                          "content": " ".join(rng.choice(WORDS) for _ in range(words)),
                          "timestamp": 1796000000.0 + j, "metadata": {}} for j in range(messages)]}


def _write(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    Path(f"{path}.lock").touch()


def big_home(root: Path, megabytes: int) -> Path:
    home = root / f"home-{megabytes}mb"
    marker = home / ".ready"
    if marker.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    (home / "sessions").mkdir(parents=True)
    rng = random.Random(14)
    count = 2000 * megabytes // 100
    for i in range(count):
        _write(home / "sessions" / f"s{i:05}.json", _session(rng, f"s{i:05}", 120, 50))
    marker.touch()
    return home


def one_big_session(root: Path, megabytes: int) -> Path:
    home = root / f"session-{megabytes}mb"
    marker = home / ".ready"
    if marker.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    (home / "sessions").mkdir(parents=True)
    rng = random.Random(77)
    per_message = 440  # bytes a message of 50 words takes, indented
    _write(home / "sessions" / "big.json", _session(rng, "big", megabytes * MB // per_message, 50))
    _write(home / "sessions" / "small.json", _session(rng, "small", 4, 10))
    marker.touch()
    return home


def largest_file(home: Path) -> int:
    return max(p.stat().st_size for p in (home / "sessions").glob("*.json"))


def total(home: Path) -> int:
    return sum(p.stat().st_size for p in (home / "sessions").glob("*.json"))


def peak_rss(argv: list[str], *, stdout: str | None = None) -> tuple[int, int, float]:
    """(exit code, peak RSS in bytes, wall seconds) of one run, as ``/usr/bin/time`` reports it: the command's own
    ``ru_maxrss`` (and its reaped children's), not inflated by this script's pages, which a child forked
    straight from here would carry in its high-water mark until it execs."""
    import time

    report = tempfile.NamedTemporaryFile(prefix="peak-", suffix=".txt", delete=False)
    report.close()
    sink = open(stdout or os.devnull, "wb")
    env = {**os.environ, "PRAISONMEM_CACHE": "false", "DO_NOT_TRACK": "1"}
    start = time.perf_counter()
    try:
        code = subprocess.run([TIME, "-f", "%M", "-o", report.name, *argv], stdout=sink, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, env=env).returncode
        wall = time.perf_counter() - start
        kilobytes = int(Path(report.name).read_text().split()[-1])
    finally:
        sink.close()
        os.unlink(report.name)
    return code, kilobytes * 1024, wall


def rows_of(pm: list[str], home: Path, single: Path, out: Path, which: str) -> list[tuple]:
    """(name, data, argv, stdout, undo argv): the rows, each command as ``pm`` runs it."""
    def on(data: Path, *args: str) -> list[str]:
        return [*pm, "--home", str(data), "session", *args]

    rows = [] if which == "big" else [
        ("export --all -o FILE", home, on(home, "export", "--all", "-o", str(out / "all.json")), None, None),
        ("export --all > stdout", home, on(home, "export", "--all"), str(out / "stdout.json"), None),
        ("export --all --format jsonl", home, on(home, "export", "--all", "--format", "jsonl", "-o",
                                                 str(out / "all.jsonl")), None, None),
        ("search --limit 0 (100 MB home)", home, on(home, "search", "lisbon paris", "--limit", "0"), None, None),
        ("search (100 MB home)", home, on(home, "search", "lisbon paris"), None, None),
        ("list (100 MB home)", home, on(home, "list", "--limit", "0"), None, None),
    ]
    return rows + [
        ("export BIG", single, on(single, "export", "big", "-o", str(out / "big.json")), None, None),
        ("export BIG --format jsonl", single, on(single, "export", "big", "--format", "jsonl", "-o",
                                                 str(out / "big.jsonl")), None, None),
        ("export BIG --format markdown", single, on(single, "export", "big", "--format", "markdown", "-o",
                                                    str(out / "big.md")), None, None),
        ("rename BIG --title", single, on(single, "rename", "big", "--title", "renamed"), None, None),
        ("rename BIG (id)", single, on(single, "rename", "big", "big-renamed", "--force"), None,
         on(single, "rename", "big-renamed", "big", "--force")),
        ("search (big session)", single, on(single, "search", "lisbon", "--limit", "5"), None, None),
        ("show BIG --tail 5", single, on(single, "show", "big", "--tail", "5"), None, None),
    ]


def measure(argv: list[str], stdout: str | None, undo: list[str] | None, out: Path, name: str) -> tuple[int, float]:
    for stale in out.iterdir():
        stale.unlink()
    code, peak, wall = peak_rss(argv, stdout=stdout)
    if code != 0:
        raise SystemExit(f"{name}: exit {code}: {' '.join(argv)}")
    if undo is not None and subprocess.run(undo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        raise SystemExit(f"{name}: the undo failed: {' '.join(undo)}")
    return peak, wall


def main() -> int:
    import statistics

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="keep the data here and reuse it (default: a temp dir)")
    parser.add_argument("--home-mb", type=int, default=100)
    parser.add_argument("--session-mb", type=int, default=63)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rows", choices=("all", "big"), default="all")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    parser.add_argument("--praisonmem", default=str(Path(sys.executable).with_name("praisonmem")))
    parser.add_argument("--only", action="append", metavar="WORD", help="only the rows whose name holds WORD")
    parser.add_argument("--before", help="another praisonmem command to measure, interleaved (e.g. an old checkout)")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="praisonmem-peak-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        home = big_home(root, args.home_mb) if args.rows == "all" else root
        single = one_big_session(root, args.session_mb)
        out = root / "out"
        out.mkdir(exist_ok=True)
        variants = [("after", args.praisonmem.split())] + ([("before", args.before.split())] if args.before else [])
        tables = {label: [row for row in rows_of(pm, home, single, out, args.rows)
                          if not args.only or any(word in row[0] for word in args.only)] for label, pm in variants}
        results = []
        print(f"{'command':32} {'run':>6} {'largest':>9} {'peak RSS':>9} {'peak/largest':>13} {'wall':>7}")
        for i, (name, data, _, _, _) in enumerate(tables["after"]):
            samples: dict[str, list[tuple[int, float]]] = {label: [] for label, _ in variants}
            for _ in range(args.rounds):
                for label, _ in variants:
                    _, _, argv, stdout, undo = tables[label][i]
                    samples[label].append(measure(argv, stdout, undo, out, name))
            largest, size = largest_file(data), total(data)
            for label, _ in reversed(variants):
                peak = int(statistics.median(p for p, _ in samples[label]))
                wall = statistics.median(w for _, w in samples[label])
                row = {"command": name, "run": label, "data_bytes": size, "largest_file_bytes": largest,
                       "peak_rss_bytes": peak, "ratio": round(peak / largest, 2), "wall_s": round(wall, 2),
                       "rounds": args.rounds}
                results.append(row)
                print(f"{name:32} {label:>6} {largest / MB:8.1f}M {peak / MB:8.1f}M {row['ratio']:12.2f}x "
                      f"{wall:6.2f}s")
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        if args.json:
            args.json.write_text(json.dumps({"load_average": load, "rows": results}, indent=2) + "\n",
                                 encoding="utf-8")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
