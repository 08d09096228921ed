#!/usr/bin/env python3
"""praisonmem locate over a tree of 100,000 files vs ``find DIR -type f | wc -l``.

The tree (generated once, reused with --dir): a source-like tree of 95 packages x 10 modules x ~100 plain files
(each package with a package.json, each module with a data.json of another app), and the stores a project
holds: a sessions directory (2,000 session files with their lock sidecars), a FileMemory of 50 users, an Upsonic
SQLite database and another app's database. Depth 4 at most, no link, no .git: the walk enters every directory
find does. In interleaved rounds:

* praisonmem: ``locate TREE --json`` (HOME is empty: the tree's stores only);
* find: ``sh -c 'find TREE -type f | wc -l'``;
* python walk: a bare ``os.scandir`` walk counting the regular files, in ``python -S`` (what any Python walk
  costs: start-up and the per-entry loop; reported beside the row, in the JSON);
* typer + walk: the same walk after ``import typer`` (the floor of a Typer CLI that walks in Python);
* start-up: ``locate EMPTY --json`` (praisonmem's start-up, its command built, the homes looked at, no tree).

The floors say where the time goes: praisonmem's figure is about start-up + (python walk - Python's own start-up)
+ what it does per store file (reading a JSON file's head, a stat for the sizes).

Goal (README.md, Finding every store): <= 2.0x find. Checked: locate visits exactly the files find counts (the
core's own count, once, untimed), reports the same stores every run (same bytes), and finds the sessions
directory, the FileMemory and the Upsonic database, not the other app's.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
FILES = 100_000
GENERATOR_VERSION = 1


REPO = Path(__file__).resolve().parent.parent
UPSONIC_DB = REPO / "tests" / "fixtures" / "upsonic-0.77.3" / "data.db"
PACKAGES, MODULES = 95, 10


def make_tree(data_dir: Path, files: int) -> Path:
    """The tree (see the module docstring), ``files`` regular files in all."""
    tree = data_dir / f"locate-tree-{files}"
    marker = data_dir / f"{tree.name}.ready"
    params = {"kind": "locate", "version": GENERATOR_VERSION, "files": files}
    if _data._ready(marker, params):
        return tree
    _data._fresh(tree, marker)
    project = tree / "project"
    _data.write_sessions(project / "sessions", files // 50, 4)  # each with its lock sidecar
    for u in range(50):
        _data.write_memory_user(project / ".praisonai" / "memory" / f"user{u:02d}", 3, 3, 1, 0, seed=u)
    shutil.copy(UPSONIC_DB, project / "upsonic.db")
    conn = sqlite3.connect(project / "other-app.db")
    conn.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, token TEXT)")
    conn.commit()
    conn.close()
    left = files - sum(1 for p in tree.rglob("*") if p.is_file())
    per_module = left // (PACKAGES * MODULES)
    extra = left - per_module * PACKAGES * MODULES
    for p in range(PACKAGES):
        package = tree / "src" / f"pkg{p:03d}"
        for m in range(MODULES):
            module = package / f"mod{m:02d}"
            module.mkdir(parents=True)
            count = per_module + (1 if p * MODULES + m < extra else 0)
            names = ["data.json"] + [f"file{i:03d}.{('py', 'txt', 'md')[i % 3]}" for i in range(count - 1)]
            if m == 0:
                names[-1] = "package.json"
            for name in names:
                body = '{"name": "pkg%03d", "version": "1.0.0"}\n' % p if name.endswith(".json") else "x = 1\n"
                (module / name).write_text(body, encoding="utf-8")
    marker.write_text(json.dumps(params), encoding="utf-8")
    return tree


BARE_WALK = r"""
import os, sys
stack, count = [sys.argv[1]], 0
while stack:
    with os.scandir(stack.pop()) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                count += 1
print(count)
"""


def visited(tree: Path, env: dict[str, str]) -> int:
    """The files the core's walk visits (untimed, in a process with the benchmark's environment)."""
    code = ("import json, sys\nfrom praisonmem.core.locate import locate\nfrom praisonmem.core.config import Settings\n"
            "from praisonmem.core.paths import resolve\nprint(locate(resolve(), Settings(), [sys.argv[1]]).files_visited)")
    return int(_bench.run([_bench.PYTHON, "-c", code, str(tree)], env=env).stdout)


def body(ctx: Context) -> list[Row]:
    files = 10_000 if ctx.quick else FILES
    tree = make_tree(ctx.data_dir, files)
    print(f"locate, {files:,} files, {_bench.load_line()}", file=sys.stderr)
    env = ctx.env  # bytecode written, as installed: see _data.isolated_env

    def pm_run(*argv: str) -> _bench.Run:
        return _bench.run([*ctx.pm, *argv], env=env, cwd=ctx.cwd)

    counted = int(_bench.run(["sh", "-c", 'find "$0" -type f | wc -l', str(tree)], env=env).stdout)
    assert counted == files, (counted, files)
    assert visited(tree, env) == counted, "locate's walk did not visit exactly the files find counts"
    expected = pm_run("locate", str(tree), "--json").stdout
    kinds = sorted((s["kind"], s["path"].removeprefix(str(tree))) for s in json.loads(expected)["stores"])
    assert kinds == [("filememory", "/project/.praisonai/memory"), ("session-dir", "/project/sessions"),
                     ("upsonic-sqlite", "/project/upsonic.db")], kinds

    def praisonmem() -> dict[str, Sample]:
        result = pm_run("locate", str(tree), "--json")
        assert result.stdout == expected, "locate output changed between runs"
        return {"praisonmem": result.sample}

    def find() -> dict[str, Sample]:
        result = _bench.run(["sh", "-c", 'find "$0" -type f | wc -l', str(tree)], env=env)
        assert int(result.stdout) == counted
        return {"find": result.sample}

    def python_walk() -> dict[str, Sample]:
        result = _bench.run([_bench.PYTHON, "-S", "-c", BARE_WALK, str(tree)], env=env)
        assert int(result.stdout) == counted
        return {"python walk": result.sample}

    def typer_walk() -> dict[str, Sample]:
        result = _bench.run([_bench.PYTHON, "-c", "import typer\n" + BARE_WALK, str(tree)], env=env)
        assert int(result.stdout) == counted
        return {"typer + walk": result.sample}

    empty = _data.scratch(ctx.data_dir, "locate-empty")

    def startup() -> dict[str, Sample]:
        return {"start-up": pm_run("locate", str(empty), "--json").sample}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, find, python_walk, typer_walk, startup], ctx.rounds)
    floors = ", ".join(f"{label} {_bench.median(samples[label]) * 1000:.0f} ms"
                       for label in ("python walk", "typer + walk", "start-up"))
    print(f"floors: {floors}", file=sys.stderr)
    details = _bench.details(samples, load_before, files=files, output_sha256=ctx.digest(expected))
    return [_bench.ratio_row(f"locate, {files:,}-file tree (vs find | wc -l)", samples, "praisonmem", "find", 2.0,
                             checked=f"{counted:,} files visited, as find counts; the same 3 stores every run",
                             details=details)]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
