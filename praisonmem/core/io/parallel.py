"""Read-only fan-out over many files: a fork pool for large directories.

Listing or searching 10,000 sessions is dominated by JSON decoding, which a
single Python thread cannot share. Above :data:`MIN_ITEMS` files (and with
more than one CPU) the work is split into chunks and run in forked worker
processes. Workers only read; every write stays in the parent process.
Results come back in input order, so output does not depend on the pool.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many files the pool costs more than it saves: forking the workers and sending results back
# takes 20-40 ms on 2 cores; reading and decoding 1,000 session files serially about as long, so the
# pool loses at 1,000 files and breaks even near 2,000 (measured: issue 13).
MIN_ITEMS = 2000
MAX_WORKERS = 8
CHUNKS_PER_WORKER = 4


def workers_for(count: int) -> int:
    if count < MIN_ITEMS:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def map_chunks(
    fn: Callable[[list[T]], list[R]],
    items: Sequence[T],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """``fn`` over chunks of ``items``, concatenated in order; forked workers when it pays.

    ``fn`` must be a module-level function (it is pickled by reference).
    ``progress(done, total)`` is called in the parent after each chunk.
    """
    total = len(items)
    workers = workers_for(total)
    if workers == 1:
        return _serial(fn, items, progress)
    import multiprocessing

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform
        return _serial(fn, items, progress)
    size = max(1, -(-total // (workers * CHUNKS_PER_WORKER)))
    chunks = [list(items[i : i + size]) for i in range(0, total, size)]
    results: list[R] = []
    done = 0
    with context.Pool(workers) as pool:
        for chunk, result in zip(chunks, pool.imap(fn, chunks)):
            results.extend(result)
            done += len(chunk)
            if progress:
                progress(done, total)
    return results


def _serial(
    fn: Callable[[list[T]], list[R]], items: Sequence[T], progress: Callable[[int, int], None] | None
) -> list[R]:
    if not progress:
        return fn(list(items))
    results: list[R] = []
    step = 256
    for start in range(0, len(items), step):
        results.extend(fn(list(items[start : start + step])))
        progress(min(start + step, len(items)), len(items))
    return results
