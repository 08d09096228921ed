"""Read-only fan-out over many files: a fork pool for large directories.

Listing or searching 10,000 sessions is dominated by JSON decoding, which a
single Python thread cannot share. Above :data:`MIN_ITEMS` files (and with
more than one CPU) the work is split into chunks and run in forked worker
processes. Workers only read; every write stays in the parent process.
Results come back in input order, so output does not depend on the pool.

Ctrl-C reaches the whole foreground process group. Workers ignore SIGINT (they
are born with it blocked, so not even one forked a moment before the signal can
print a traceback); the parent alone turns it into ``interrupted`` (exit 130)
and terminates and reaps every worker before it exits, so none is left behind
holding a pipe.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 1000
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
    # SIGINT blocked while the pool forks: each worker inherits the block (and ignores SIGINT before
    # unblocking it), and a Ctrl-C meanwhile waits until the pool exists, so terminate() reaches them all.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = context.Pool(workers, initializer=_ignore_interrupts)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a pending Ctrl-C is raised here, inside the try
        for chunk, result in zip(chunks, pool.imap(fn, chunks)):
            results.extend(result)
            done += len(chunk)
            if progress:
                progress(done, total)
        pool.close()
        pool.join()
    except BaseException:
        _stop(pool)
        raise
    return results


def _ignore_interrupts() -> None:
    """A worker's first act: the parent alone answers Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop(pool: Any) -> None:
    """Terminate and reap every worker, even if Ctrl-C is pressed again meanwhile (or the CLI raises it
    again: ``cli/interrupts.py``)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGALRM})
    try:
        pool.terminate()
        pool.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


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
