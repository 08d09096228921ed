#!/usr/bin/env python3
"""Start-up: praisonmem's cheapest commands vs python -c "import typer", with hyperfine.

Commands (hyperfine -N, no shell; run in an empty dir outside any git repository,
on a copy of examples/home):

* reference: ``python -c "import typer"`` (the venv's python);
* ``praisonmem workspace id``;
* ``praisonmem --home HOME session show my_chat`` (a 2-message session, human output);
* ``praisonmem --home HOME session list --json``;
* ``praisonmem --version`` (for scale only; no goal).

Each round is one hyperfine call (--warmup 3, --runs N for every command, order
rotated per round); a round's figure is hyperfine's median for the command (from
--export-json), the result the median over rounds. Goal (README.md, The rows): <= 1.25x
import typer for each of the three commands. Checked: each command exits 0 and
prints the same bytes every time it is run outside hyperfine.
"""

from __future__ import annotations

import json
import shlex
import shutil
import statistics
import subprocess
import sys

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
RUNS, QUICK_RUNS = 20, 5
HYPERFINE = "hyperfine"  # Debian package 'hyperfine'


def body(ctx: Context) -> list[Row]:
    if not shutil.which(HYPERFINE):
        raise SystemExit("startup needs hyperfine (Debian package 'hyperfine')")
    home = _data.scratch(ctx.data_dir, "example-home")
    shutil.rmtree(home)
    shutil.copytree(_data.EXAMPLE_HOME, home)
    pm = shlex.join(ctx.pm)
    env = ctx.env  # bytecode written, as installed: see _data.isolated_env
    commands = {
        "import typer": shlex.join([_bench.PYTHON, "-c", "import typer"]),
        "workspace id": f"{pm} workspace id",
        "session show": f"{pm} --home {shlex.quote(str(home))} session show {_data.SMALL_SESSION}",
        "session list --json": f"{pm} --home {shlex.quote(str(home))} session list --json",
        "--version": f"{pm} --version",
    }
    for label, command in commands.items():
        first, second = (_bench.run(shlex.split(command), env=env, cwd=ctx.cwd) for _ in range(2))
        assert first.stdout == second.stdout, f"{label}: output changed between runs"
    sessions = json.loads(_bench.run(shlex.split(commands["session list --json"]), env=env, cwd=ctx.cwd).stdout)
    assert len(sessions) == len(list((home / "sessions").glob("*.json"))), "session list missed a session"

    runs = QUICK_RUNS if ctx.quick else RUNS
    export = ctx.data_dir / "scratch" / "hyperfine.json"
    samples: dict[str, list[Sample]] = {label: [] for label in commands}
    load_before = _bench.load_line()
    outliers = 0  # hyperfine's "statistical outliers" warnings: one per command and round at most
    for r in range(ctx.rounds):
        order = list(commands) if r % 2 == 0 else list(reversed(commands))
        proc = subprocess.run([HYPERFINE, "-N", "--style", "none", "--warmup", "3", "--runs", str(runs),
                               "--export-json", str(export), *(commands[label] for label in order)],
                              env=env, cwd=ctx.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode:
            raise SystemExit(f"hyperfine exited {proc.returncode}:\n{proc.stderr[-2000:]}")
        outliers += proc.stderr.count("Statistical outliers")
        for label, result in zip(order, json.loads(export.read_text())["results"]):
            samples[label].append(Sample(statistics.median(result["times"]), result["user"] + result["system"]))
        print(f"  round {r + 1}/{ctx.rounds}: " + ", ".join(
            f"{label} {values[-1].wall * 1000:.0f}ms" for label, values in samples.items()), file=sys.stderr)
    details = _bench.details(samples, load_before, runs_per_round=runs, commands=commands,
                             outlier_warnings=outliers)
    return [_bench.ratio_row(f"start-up: {label}", samples, label, "import typer", 1.25,
                             checked="exit 0, same output every run", details=details)
            for label in ("workspace id", "session show", "session list --json")]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
