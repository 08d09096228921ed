#!/usr/bin/env python3
"""praisonmem memory search vs FileMemory(...) + search, over 100,000 items.

One FileMemory user (20k short-term, 60k long-term, 10k entities, 10k episodic
items over the last 7 days), for "dark mode" (hits) and "zebra" (no hits), in
interleaved rounds:

* praisonmem: ``memory search QUERY --json --user-id bench`` (default --limit 10), run
  in the project dir (``./.praisonai/memory``, where the library looks);
* library: a process doing import + ``FileMemory(user_id="bench")`` + ``search(QUERY, limit=10)``;
* library call: ``FileMemory(...)`` construction + ``search`` in this process (no import).

Goal (README.md, The rows): >= 4x faster than the library process (ratio <= 0.25), identical
results. Checked: the hits shown equal the library's (type, score and the whole
item, in order), every timed run prints the same bytes, and, once, ``--limit 0``
gives every hit of the library's ``limit=10**9``, in order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
QUERIES = ("dark mode", "zebra")

LIBRARY = """
import json, sys
from praisonaiagents.memory.file_memory import FileMemory
print(json.dumps(FileMemory(user_id=sys.argv[1]).search(sys.argv[2], limit=int(sys.argv[3]))))
"""


def body(ctx: Context) -> list[Row]:
    sizes = _data.MEMORY_QUICK if ctx.quick else _data.MEMORY_FULL
    project = _data.memory_project(ctx.data_dir, **sizes)
    total = sum(sizes.values())
    print(f"memory search, {total:,} items ({_data.tree_size(project) / 1e6:.0f} MB)", file=sys.stderr)
    rows: list[Row] = []
    for query in QUERIES:
        rows.append(measure(ctx, project, query, total))
    return rows


def measure(ctx: Context, project: Path, query: str, total: int) -> Row:
    from praisonaiagents.memory.file_memory import FileMemory

    base = str(project / ".praisonai" / "memory")
    search = ("memory", "search", query, "--json", "--user-id", _data.USER)

    def ours(limit: int | None = None) -> _bench.Run:
        return ctx.pm_run(*search, *(("--limit", str(limit)) if limit is not None else ()), cwd=project)

    def theirs(limit: int) -> _bench.Run:
        return ctx.py_run(LIBRARY, _data.USER, query, str(limit), cwd=project)

    every = json.loads(ours(0).stdout)
    assert every == json.loads(theirs(10**9).stdout), f"{query!r}: --limit 0 differs from the library's search"
    expected = json.loads(theirs(10).stdout)
    assert expected == every[:10]
    shown = ours().stdout
    assert json.loads(shown) == expected, f"{query!r}: results differ from the library's"

    def praisonmem() -> dict[str, Sample]:
        result = ours()
        assert result.stdout == shown, "memory search output changed between runs"
        return {"praisonmem": result.sample}

    def library() -> dict[str, Sample]:
        result = theirs(10)
        assert json.loads(result.stdout) == expected
        return {"library": result.sample}

    def library_call() -> dict[str, Sample]:
        sample, found = _bench.in_process(lambda: FileMemory(user_id=_data.USER, base_path=base).search(query, limit=10))
        assert found == expected
        return {"library call": sample}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, library, library_call], ctx.rounds)
    details = _bench.details(samples, load_before, query=query, items=total, hits=len(every),
                             output_sha256=ctx.digest(shown))
    return _bench.ratio_row(f'memory search "{query}", {total:,} items ({len(every):,} hits)', samples,
                            "praisonmem", "library", 0.25,
                            checked=f"all {len(every):,} hits (type, score, item, order) = FileMemory.search",
                            details=details)


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
