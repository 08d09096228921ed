"""Read-only fan-out over many files: a fork pool for large directories.

Listing or searching 10,000 sessions is dominated by JSON decoding, which a
single Python thread cannot share. Above :data:`MIN_ITEMS` files (and with
more than one CPU) the work is split into chunks and run in forked worker
processes. Workers only read; every write stays in the parent process.
Results come back in input order, so output does not depend on the pool.

Ctrl-C reaches the whole foreground process group. Workers ignore SIGINT (they
are born with it blocked, so not even one forked a moment before the signal can
print a traceback). The parent keeps it blocked while the pool works, looks for
it between results, terminates and reaps every worker, and only then lets it be
raised (``interrupted``, exit 130): none is left behind holding a pipe, and no
KeyboardInterrupt lands inside the pool's own locks.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many files the pool costs more than it saves: forking the workers and sending results back
# takes 20-40 ms on 2 cores; reading and decoding 1,000 session files serially about as long, so the
# pool loses at 1,000 files and breaks even near 2,000 (measured on a 2-core machine).
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
    # SIGINT stays blocked while the pool works: a Ctrl-C raised inside the pool's locks and conditions
    # would break them (and with them terminate()). It waits, pending, and is looked for between results;
    # then every worker is terminated and reaped, and only unblocking delivers it, as KeyboardInterrupt.
    # Workers inherit the block and ignore SIGINT before unblocking it.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = context.Pool(workers, initializer=_ignore_interrupts)
        try:
            results_of = pool.imap(fn, chunks)
            for chunk in chunks:
                result = _next(results_of)
                if result is _INTERRUPTED:
                    break
                results.extend(result)
                done += len(chunk)
                if progress:
                    progress(done, total)
            else:
                pool.close()
                pool.join()
                return results
        except BaseException:
            _stop(pool)
            raise
        _stop(pool)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a pending Ctrl-C is raised here
    raise KeyboardInterrupt  # only if SIGINT was not blocked before this call (then it was ours to raise)


_INTERRUPTED = object()
POLL = 0.05  # how soon a Ctrl-C is noticed while the pool works


def _next(results: Any) -> Any:
    """The next chunk's result, or :data:`_INTERRUPTED` once a SIGINT is pending."""
    import multiprocessing

    while True:
        try:
            return results.next(timeout=POLL)
        except multiprocessing.TimeoutError:
            if signal.SIGINT in signal.sigpending():
                return _INTERRUPTED


def _ignore_interrupts() -> None:
    """A worker's first act: the parent alone answers Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop(pool: Any) -> None:
    """Kill and reap every worker, even if Ctrl-C is pressed again meanwhile (or the CLI raises it again:
    ``cli/interrupts.py``). Not ``pool.terminate()``: it first takes the task queue's lock, which an idle
    worker holds while it waits for a task, and so can wait forever. The pool's maintenance thread is
    stopped first, so no worker is started again behind this. Private attributes of ``multiprocessing.pool``,
    each pinned by ``tests/test_private_apis.py``."""
    from multiprocessing import pool as mp_pool

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGALRM})
    try:
        pool._state = mp_pool.TERMINATE
        pool._worker_handler._state = mp_pool.TERMINATE
        # it sleeps until a worker exits or a result comes: with idle workers, only this wakes it to stop
        pool._change_notifier.put(None)
        pool._worker_handler.join()
        for worker in pool._pool:
            worker.kill()
        for worker in pool._pool:
            worker.join()
        pool._terminate.cancel()  # its exit-time terminate() would wait on the locks the killed workers held
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
