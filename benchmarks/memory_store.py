#!/usr/bin/env python3
"""praisonmem memory store --long into the 100k store vs one json.load of that store.

The store is the memory_search user (60,000 long-term items, long_term_limit 60,000,
so every add also drops the least important, oldest item, as the library does).
Each run starts from the same long_term.json (restored, untimed). In interleaved rounds:

* praisonmem: ``memory store TEXT --long --user-id bench`` in a copy of the project;
* json.load: a process doing one ``json.load`` of that long_term.json (the reference);
* json.load call: the same ``json.load`` in this process;
* library add: a process doing import + ``FileMemory(user_id="bench").add_long_term(TEXT)``
  in another copy (for scale only; no goal).

Goal (README.md, The rows): <= 1.5x the json.load process. Checked, once: the long_term.json
praisonmem leaves is the one the library leaves after the same add (same items,
same order, same bytes), ignoring the new item's id, created_at and updated_at.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
TEXT = "Benchmark note: the user prefers dark mode in every editor"

JSON_LOAD = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    json.load(handle)
"""

LIBRARY = """
import sys
from praisonaiagents.memory.file_memory import FileMemory
print(FileMemory(user_id=sys.argv[1]).add_long_term(sys.argv[2], importance=0.8))
"""


def copy_project(ctx: Context, source: Path, name: str) -> Path:
    project = _data.scratch(ctx.data_dir, name)
    shutil.copytree(_data.memory_user_dir(source), _data.memory_user_dir(project))
    return project


def normalised(path: Path) -> list[dict]:
    items = json.loads(path.read_text(encoding="utf-8"))
    new = [item for item in items if item["content"] == TEXT]
    assert len(new) == 1, f"{path}: {len(new)} items with the stored text"
    new[0].update(id="<id>", created_at=0.0, updated_at=0.0)
    return items


def body(ctx: Context) -> list[Row]:
    sizes = _data.MEMORY_QUICK if ctx.quick else _data.MEMORY_FULL
    source = _data.memory_project(ctx.data_dir, **sizes)
    pristine = _data.memory_user_dir(source) / "long_term.json"
    ours_dir, lib_dir = copy_project(ctx, source, "store-praisonmem"), copy_project(ctx, source, "store-library")
    ours_file = _data.memory_user_dir(ours_dir) / "long_term.json"
    lib_file = _data.memory_user_dir(lib_dir) / "long_term.json"
    print(f"memory store --long, {sizes['long']:,} long-term items ({pristine.stat().st_size / 1e6:.0f} MB), "
          f"{_bench.load_line()}", file=sys.stderr)

    def store() -> _bench.Run:
        shutil.copyfile(pristine, ours_file)
        result = ctx.pm_run("memory", "store", TEXT, "--long", "--user-id", _data.USER, cwd=ours_dir)
        assert re.fullmatch(rb"[0-9a-f]{16}\n", result.stdout), result.stdout
        return result

    def library_add() -> _bench.Run:
        shutil.copyfile(pristine, lib_file)
        return ctx.py_run(LIBRARY, _data.USER, TEXT, cwd=lib_dir)

    store()
    library_add()
    written = ours_file.read_text(encoding="utf-8")
    assert written == _data.dumps(json.loads(written)), "long_term.json is not serialised as the library does"
    assert normalised(ours_file) == normalised(lib_file), "long_term.json differs from the library's after the add"
    assert len(json.loads(written)) == sizes["long"]

    def praisonmem() -> dict[str, Sample]:
        return {"praisonmem": store().sample}

    def json_load() -> dict[str, Sample]:
        return {"json.load": ctx.py_run(JSON_LOAD, str(pristine)).sample}

    def json_load_call() -> dict[str, Sample]:
        def load() -> object:
            with open(pristine, encoding="utf-8") as handle:
                return json.load(handle)
        return {"json.load call": _bench.in_process(load)[0]}

    def library() -> dict[str, Sample]:
        return {"library add": library_add().sample}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, json_load, json_load_call, library], ctx.rounds)
    details = _bench.details(samples, load_before, items=sizes["long"], bytes=pristine.stat().st_size)
    return [_bench.ratio_row(f"memory store --long, {sizes['long']:,}-item store", samples, "praisonmem",
                             "json.load", 1.50, checked="long_term.json = the library's after add_long_term",
                             details=details)]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
