"""The harness every benchmark script shares: timed runs, interleaving, medians, the goals table.

A *case* is one thing to time (a praisonmem command, the library doing the same
work, a floor); a *round* runs every case once. Rounds alternate the order of
the cases (forward, then backward, ...), so a slow patch on this shared machine
falls on both sides. Each figure is the median over the rounds.

Subprocesses are timed wall-clock from spawn to reap, each launched by
``/usr/bin/time`` so each run's peak RSS is that run's own (``ru_maxrss`` of the
process and every descendant it reaped, e.g. fork-pool workers: the largest
single process), neither the running maximum ``RUSAGE_CHILDREN`` gives nor
inflated by this harness's own pages (see :func:`run`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import _data

PYTHON = sys.executable


@dataclass
class Sample:
    wall: float
    cpu: float | None = None  # user + sys of the process tree, seconds
    rss_kib: int | None = None


@dataclass
class Run:
    sample: Sample
    returncode: int
    stdout: bytes
    stderr: bytes


def praisonmem_cmd(override: str | None = None) -> list[str]:
    """How to call the CLI: --praisonmem, else the console script beside this python, else -m."""
    if override:
        return shlex.split(override)
    script = Path(PYTHON).with_name("praisonmem")
    return [str(script)] if script.exists() else [PYTHON, "-m", "praisonmem"]


TIME = "/usr/bin/time"  # Debian package 'time'


def run(cmd: Sequence[str], *, env: dict[str, str], cwd: Path | str | None = None,
        ok: Sequence[int] = (0,)) -> Run:
    """One subprocess, launched by /usr/bin/time, stdout and stderr to temp files, reaped with wait4.

    The launcher matters for RSS: a child forked from this (large) process starts with this
    process's pages, and the kernel keeps that high-water mark across exec; forked from
    /usr/bin/time it starts with time's 2 MiB. time reports the ru_maxrss its own wait4 got:
    the command and every descendant it reaped (fork-pool workers), the largest of them.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        launcher = [TIME, "-f", "%M", "-o", rss.name] if os.access(TIME, os.X_OK) else []
        started = time.perf_counter()
        proc = subprocess.Popen([*launcher, *cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = rss.read().split()
        peak = int(lines[-1]) if launcher and lines and lines[-1].isdigit() else None
        result = Run(Sample(wall, usage.ru_utime + usage.ru_stime, peak), proc.returncode, out.read(), err.read())
    if result.returncode not in ok:
        raise SystemExit(f"{shlex.join(cmd)} exited {result.returncode}:\n"
                         f"{result.stderr.decode(errors='replace')[-2000:]}")
    return result


def in_process(fn: Callable[[], object]) -> tuple[Sample, object]:
    """Time a call in this process (wall and CPU; no RSS: this process holds much else)."""
    cpu = time.process_time()
    started = time.perf_counter()
    value = fn()
    return Sample(time.perf_counter() - started, time.process_time() - cpu), value


# A case returns {label: Sample} (several labels when runs must be consecutive, e.g. cold then warm).
Case = Callable[[], dict[str, Sample]]


def interleave(cases: Sequence[Case], rounds: int, *, warmup: int = 1, quiet: bool = False
               ) -> dict[str, list[Sample]]:
    samples: dict[str, list[Sample]] = {}
    for _ in range(warmup):
        for case in cases:
            case()
    for r in range(rounds):
        order = list(cases) if r % 2 == 0 else list(reversed(cases))
        for case in order:
            for label, sample in case().items():
                samples.setdefault(label, []).append(sample)
        if not quiet:
            print(f"  round {r + 1}/{rounds}: " + ", ".join(
                f"{label} {vals[-1].wall * 1000:.0f}ms" for label, vals in samples.items()), file=sys.stderr)
    return samples


def details(samples: dict[str, list[Sample]], load_before: str, **extra: object) -> dict:
    """What a row keeps besides its two figures: every case's medians and runs, the load, ``extra``."""
    medians = {label: {"wall": median(values), "cpu": median(values, "cpu"),
                       "rss_mib": (median(values, "rss_kib") or 0) / 1024 or None}
               for label, values in samples.items()}
    return {**extra, "medians": medians, "load_before": load_before, "load_after": load_line(),
            "runs": {label: [round(s.wall, 4) for s in values] for label, values in samples.items()}}


def median(samples: list[Sample], attr: str = "wall") -> float | None:
    values = [getattr(s, attr) for s in samples if getattr(s, attr) is not None]
    return statistics.median(values) if values else None


def spread(samples: list[Sample]) -> float:
    """Half the range over the median: the noise of one figure (0.05 = +-5 %)."""
    values = [s.wall for s in samples]
    mid = statistics.median(values)
    return (max(values) - min(values)) / 2 / mid if mid else 0.0


@dataclass
class Row:
    """One line of the goals table: praisonmem against its reference."""

    work: str
    ours: str  # what was timed, e.g. the command line
    reference: str
    ours_value: float  # seconds, or MiB for a memory row
    ref_value: float | None
    goal: str  # e.g. "<= 0.40" (ratio) or "<= 40 MiB"
    limit: float
    unit: str = "s"  # "s" (ratio row), "MiB" (absolute row) or "bytes" (a ratio of sizes)
    checked: str = ""  # what was asserted identical, if anything
    noise: float = 0.0
    cpu_ratio: float | None = None  # user+sys of the process trees, ours / reference
    details: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return self.ours_value / self.ref_value if self.ref_value else None

    @property
    def passed(self) -> bool:
        value = self.ours_value if self.unit == "MiB" else self.ratio
        return value is not None and value <= self.limit

    def to_json(self) -> dict:
        return {**asdict(self), "ratio": self.ratio, "passed": self.passed}


def ratio_row(work: str, samples: dict[str, list[Sample]], ours: str, ref: str, limit: float, *,
              goal: str | None = None, checked: str = "", details: dict | None = None) -> Row:
    cpu_ours, cpu_ref = median(samples[ours], "cpu"), median(samples[ref], "cpu")
    return Row(work, ours, ref, median(samples[ours]), median(samples[ref]),
               goal or f"<= {limit:.2f}", limit, checked=checked,
               noise=max(spread(samples[ours]), spread(samples[ref])), details=details or {},
               cpu_ratio=cpu_ours / cpu_ref if cpu_ours is not None and cpu_ref else None)


def rss_row(work: str, samples: dict[str, list[Sample]], ours: str, ref: str, limit_mib: float) -> Row:
    mib = lambda label: median(samples[label], "rss_kib") / 1024  # noqa: E731
    return Row(work, ours, ref, mib(ours), mib(ref), f"<= {limit_mib:.0f} MiB", limit_mib, unit="MiB",
               details={"peak_rss_mib_runs": [s.rss_kib / 1024 for s in samples[ours]]})


# The raw-parse floor: list the directory, read and json-parse every *.json file, nothing else.
# argv: DIR serial|pool. "pool" is the fork pool praisonmem's core/parallel.py used when this was
# written (min(cpus, 8) workers, 4 chunks per worker, results in order); workers return a count only.
FLOOR = r"""
import json, os, sys

def parse(paths):
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            json.loads(handle.read())
    return len(paths)

directory, mode = sys.argv[1], sys.argv[2]
paths = sorted(e.path for e in os.scandir(directory) if e.name.endswith(".json") and e.is_file())
if mode == "serial":
    count = parse(paths)
else:
    import multiprocessing
    workers = max(1, min(len(os.sched_getaffinity(0)), 8))
    size = max(1, -(-len(paths) // (workers * 4)))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        count = sum(pool.imap(parse, chunks))
print(count)
"""


def floor_label(samples: dict[str, list[Sample]], serial: str = "floor serial", pool: str = "floor pool") -> str:
    """The floor is the faster (by median) of the serial and the pooled raw parse; adds it as 'floor'."""
    best = serial if median(samples[serial]) <= median(samples[pool]) else pool
    samples["floor"] = samples[best]
    return best


def fmt_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit == "bytes":  # a size row (its goal is the ratio)
        return f"{value / 1048576:.1f} MiB"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def table(rows: Sequence[Row]) -> str:
    head = ("work", "praisonmem", "reference", "ratio", "goal", "result", "noise", "cpu ratio")
    lines = [head]
    for row in rows:
        lines.append((row.work, fmt_value(row.ours_value, row.unit), fmt_value(row.ref_value, row.unit),
                      _fmt_ratio(row.ratio), row.goal, "pass" if row.passed else "FAIL", f"±{row.noise * 100:.0f}%",
                      _fmt_ratio(row.cpu_ratio)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for n, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(line)))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def markdown_table(rows: Sequence[Row]) -> str:
    out = ["| work | praisonmem | reference | ratio | goal | result | noise | cpu ratio |",
           "|---|---:|---:|---:|---|---|---:|---:|"]
    for row in rows:
        work = row.work.replace("|", r"\|")
        out.append(f"| {work} | {fmt_value(row.ours_value, row.unit)} "
                   f"| {fmt_value(row.ref_value, row.unit)} | {_fmt_ratio(row.ratio)} | {row.goal} "
                   f"| {'pass' if row.passed else 'FAIL'} | ±{row.noise * 100:.0f}% | {_fmt_ratio(row.cpu_ratio)} |")
    return "\n".join(out)


# -- command line shared by every script --------------------------------------------------------

def add_common_args(ap: argparse.ArgumentParser, rounds: int) -> None:
    ap.add_argument("--dir", type=Path, help="data dir (generated data is kept and reused there); "
                                             "default: a temp dir, removed at the end")
    ap.add_argument("--rounds", type=int, help=f"interleaved rounds (default {rounds}; --quick: 2)")
    ap.add_argument("--sessions", type=int, help="sessions in the home of the search, backup and check rows "
                                                 "(default 10000; --quick: 1000)")
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 rounds: a smoke test, not a measurement")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("--praisonmem", metavar="CMD", help="how to run the CLI (default: the console script "
                                                        "beside this python)")


class Context:
    """What a script's ``run`` gets: the data dir, rounds, the CLI command, the environment."""

    def __init__(self, args: argparse.Namespace, data_dir: Path, rounds: int) -> None:
        self.args = args
        self.data_dir = data_dir
        self.quick = args.quick
        self.rounds = args.rounds or (2 if args.quick else rounds)
        self.sessions = args.sessions or (1_000 if args.quick else 10_000)
        self.pm = praisonmem_cmd(args.praisonmem)
        self.env = _data.isolated_env(data_dir)
        self.cwd = _data.scratch(data_dir, "cwd")  # outside any git repository, no ./.praisonai

    def pm_run(self, *argv: str, home: Path | None = None, cwd: Path | None = None, ok: Sequence[int] = (0,)) -> Run:
        prefix = ["--home", str(home)] if home else []
        return run([*self.pm, *prefix, *argv], env=self.env, cwd=cwd or self.cwd, ok=ok)

    def digest(self, output: bytes) -> str:
        """sha256 of a command's output with the data dir replaced: comparable across runs and dirs."""
        return hashlib.sha256(output.replace(str(self.data_dir).encode(), b"$DATA")).hexdigest()

    def py_run(self, code: str, *argv: str, cwd: Path | None = None) -> Run:
        return run([PYTHON, "-c", code, *argv], env=self.env, cwd=cwd or self.cwd)


def main(description: str, rounds: int, body: Callable[[Context], list[Row]],
         extra_args: Callable[[argparse.ArgumentParser], None] | None = None) -> list[Row]:
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, rounds)
    if extra_args:
        extra_args(ap)
    args = ap.parse_args()
    return run_script(args, body, rounds)


def run_script(args: argparse.Namespace, body: Callable[[Context], list[Row]], rounds: int) -> list[Row]:
    temp = None
    if args.dir:
        data_dir = args.dir.resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="praisonmem-bench-")
        data_dir = Path(temp.name)
    try:
        started = time.perf_counter()
        rows = body(Context(args, data_dir, rounds))
        print(table(rows))
        if args.json:
            write_json(args.json, rows, time.perf_counter() - started, pm=praisonmem_cmd(args.praisonmem))
        return rows
    finally:
        if temp:
            temp.cleanup()


def environment(pm: Sequence[str] | None = None) -> dict:
    """Date, machine, and which praisonmem was measured: its version, location and git commit."""
    pm = list(pm or praisonmem_cmd())
    version = subprocess.run([*pm, "--version"], capture_output=True, text=True).stdout.strip()
    where = subprocess.run([PYTHON, "-c", "import praisonmem; print(praisonmem.__file__)"], capture_output=True,
                           text=True).stdout.strip()
    code = Path(where).parent.parent if where else _data.REPO

    def git(*argv: str) -> str:
        proc = subprocess.run(["git", "-C", str(code), *argv], capture_output=True, text=True)
        return proc.stdout.strip()

    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
            "cpu": cpu, "cpus": os.cpu_count(), "python": platform.python_version(),
            "praisonmem": version, "praisonmem_command": shlex.join(pm), "code": str(code),
            "commit": git("rev-parse", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "code_commit": git("log", "-1", "--format=%H", "--", "praisonmem", "pyproject.toml"),
            "dirty": bool(git("status", "--porcelain", "--", "praisonmem")), "loadavg": os.getloadavg()}


def write_json(path: Path, rows: Sequence[Row], seconds: float, extra: dict | None = None,
               pm: Sequence[str] | None = None) -> None:
    doc = {"environment": environment(pm), "seconds": round(seconds, 1), "rows": [r.to_json() for r in rows],
           **(extra or {})}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"
