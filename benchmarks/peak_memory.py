"""Peak memory: how much RSS a command reaches, against the size of what it reads.

Not a timed benchmark: each command runs once (``--rounds N``: N times, the largest peak reported) as a
subprocess of this script, and its peak RSS is what ``/usr/bin/time -f %M`` reports (the process
and every descendant it reaped, e.g. fork-pool workers: the largest single process). Two data sets,
generated once under ``--dir`` (default: a temp dir, removed at the end):

* a home of ~100 MB: 2,000 sessions of ~50 KB each (``--home-mb`` scales it);
* a home holding one ~77 MB session (``--session-mb``) and a small one.

Rows: ``session export --all`` (to a file, to stdout, as jsonl), ``session search`` (all hits, and the
default 20), ``session list``, and for the big session ``export``, ``rename --title``, ``search`` and
``show --tail 5``; each with its peak, the largest input file and the ratio. Run from the repository root with the venv's python::

    python benchmarks/peak_memory.py
    python benchmarks/peak_memory.py --dir /tmp/peak --json peak.json
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


def peak_rss(argv: list[str], *, stdout: str | None = None) -> tuple[int, int]:
    """(exit code, peak RSS in bytes) of one run, as ``/usr/bin/time`` reports it: the command's own
    ``ru_maxrss`` (and its reaped children's), not inflated by this script's pages, which a child forked
    straight from here would carry in its high-water mark until it execs."""
    report = tempfile.NamedTemporaryFile(prefix="peak-", suffix=".txt", delete=False)
    report.close()
    sink = open(stdout or os.devnull, "wb")
    env = {**os.environ, "PRAISONMEM_CACHE": "false", "DO_NOT_TRACK": "1"}
    try:
        code = subprocess.run([TIME, "-f", "%M", "-o", report.name, *argv], stdout=sink, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, env=env).returncode
        kilobytes = int(Path(report.name).read_text().split()[-1])
    finally:
        sink.close()
        os.unlink(report.name)
    return code, kilobytes * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="keep the data here and reuse it (default: a temp dir)")
    parser.add_argument("--home-mb", type=int, default=100)
    parser.add_argument("--session-mb", type=int, default=77)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the rows here too")
    parser.add_argument("--praisonmem", default=str(Path(sys.executable).with_name("praisonmem")))
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="praisonmem-peak-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        home, single = big_home(root, args.home_mb), one_big_session(root, args.session_mb)
        pm = args.praisonmem.split()
        out = root / "out"
        out.mkdir(exist_ok=True)
        rows = [
            ("export --all -o FILE", home, [*pm, "--home", str(home), "session", "export", "--all", "-o",
                                            str(out / "all.json")], None),
            ("export --all > stdout", home, [*pm, "--home", str(home), "session", "export", "--all"],
             str(out / "stdout.json")),
            ("export --all --format jsonl", home, [*pm, "--home", str(home), "session", "export", "--all",
                                                   "--format", "jsonl", "-o", str(out / "all.jsonl")], None),
            ("search --limit 0 (100 MB home)", home, [*pm, "--home", str(home), "session", "search",
                                                      "lisbon paris", "--limit", "0"], None),
            ("search (100 MB home)", home, [*pm, "--home", str(home), "session", "search", "lisbon paris"], None),
            ("list (100 MB home)", home, [*pm, "--home", str(home), "session", "list", "--limit", "0"], None),
            ("export BIG", single, [*pm, "--home", str(single), "session", "export", "big", "-o",
                                    str(out / "big.json")], None),
            ("rename BIG --title", single, [*pm, "--home", str(single), "session", "rename", "big", "--title",
                                            "renamed"], None),
            ("search (77 MB session)", single, [*pm, "--home", str(single), "session", "search", "lisbon",
                                                "--limit", "5"], None),
            ("show BIG --tail 5", single, [*pm, "--home", str(single), "session", "show", "big", "--tail", "5"],
             None),
        ]
        results = []
        print(f"{'command':32} {'data':>9} {'largest':>9} {'peak RSS':>9} {'peak/largest':>13}")
        for name, data, argv, stdout in rows:
            peaks = []
            for _ in range(args.rounds):
                for stale in out.iterdir():
                    stale.unlink()
                code, peak = peak_rss(argv, stdout=stdout)
                if code != 0:
                    raise SystemExit(f"{name}: exit {code}: {' '.join(argv)}")
                peaks.append(peak)
            largest, size = largest_file(data), total(data)
            row = {"command": name, "data_bytes": size, "largest_file_bytes": largest, "peak_rss_bytes": max(peaks),
                   "ratio": round(max(peaks) / largest, 2)}
            results.append(row)
            print(f"{name:32} {size / MB:8.1f}M {largest / MB:8.1f}M {max(peaks) / MB:8.1f}M "
                  f"{row['ratio']:12.2f}x")
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
