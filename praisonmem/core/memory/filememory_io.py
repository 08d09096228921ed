"""Reading a FileMemory file the way the library's readers do: under ``flock(LOCK_SH)`` on the file.

praisonaiagents ≤1.6.163 rewrote FileMemory files in place (``open(path, "w")``, then
``flock(LOCK_EX)`` on the file itself, ``json.dump``, unlock, close), and its readers, like 1.7.17's,
take ``LOCK_SH`` on the file before ``json.load``. Without that lock a reader sees a file being
rewritten half-written. Two gaps remain even with it, because those writers truncate before they
lock and flush their last buffer after they unlock; so a file that does not parse is read again a
few times (:data:`RETRY_PAUSES`) before it is reported as unreadable.

Unlike the library's readers, the lock wait has a deadline (``--lock-timeout``): nothing here
blocks for ever. Reading never creates or changes a file: the lock is taken on a read-only
descriptor of the file itself.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from praisonmem.core.io import jsonfile
from praisonmem.core.errors import CorruptFile, IOFailure, NotFound, io_failure

POLL = 0.02
RETRY_PAUSES = (0.02, 0.05, 0.1, 0.2)  # before each re-read of a file that did not parse


def read_shared(path: Path, timeout: float) -> bytes:
    """The file's bytes, read while holding ``LOCK_SH`` on it; waits at most ``timeout`` seconds."""
    return read_shared_stat(path, timeout)[0]


def read_shared_stat(path: Path, timeout: float) -> tuple[bytes, os.stat_result | None]:
    """Like :func:`read_shared`, with the ``fstat`` of the descriptor taken under the lock (what a cache entry
    derived from these bytes is keyed by); ``None`` instead of it when the file changed while being read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # O_NONBLOCK: a FIFO must not hang us
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        raise io_failure(path, exc) from exc
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise IOFailure(f"{path}: is a directory, not a file" if stat.S_ISDIR(mode)
                            else f"{path}: not a regular file")
        _lock_shared(fd, path, timeout)
        try:
            st = os.fstat(fd)
            data = handle.read()
            return data, st if _same(st, os.fstat(fd)) else None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def read_ranges_shared(path: Path, timeout: float, ranges: list[tuple[int, int]]
                       ) -> tuple[list[bytes], os.stat_result | None]:
    """Byte ranges ``[start, end)`` of a file, read under ``LOCK_SH``, and the ``fstat`` taken under the lock
    (the caller checks it is the version the ranges were taken from); ``None`` instead of it when the file
    changed while being read (an old release's writer truncates before it locks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        raise io_failure(path, exc) from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IOFailure(f"{path}: not a regular file")
        _lock_shared(fd, path, timeout)
        try:
            st = os.fstat(fd)
            chunks = [os.pread(fd, end - start, start) for start, end in ranges]
            return chunks, st if _same(st, os.fstat(fd)) else None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError as exc:
        raise io_failure(path, exc) from exc
    finally:
        os.close(fd)


def _same(before: os.stat_result, after: os.stat_result) -> bool:
    return (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (after.st_size, after.st_mtime_ns,
                                                                        after.st_ctime_ns)


def _lock_shared(fd: int, path: Path, timeout: float) -> None:
    jsonfile.flock_polled(fd, path, timeout, f"{path}: a writer has held it locked for over {timeout:g}s; not read",
                          shared=True, poll=POLL)


def read_settled(path: Path, timeout: float, parse: Callable[[bytes, Path], Any] = jsonfile.parse
                 ) -> tuple[bytes, Any]:
    """The bytes and parsed JSON (``parse``'s result) of a file read under its shared lock; one that does not
    parse is read again after each of :data:`RETRY_PAUSES`, then :class:`CorruptFile`."""
    raw, doc, error = read_last(path, timeout, parse)
    if error is not None:
        raise error
    return raw, doc


def read_last(path: Path, timeout: float, parse: Callable[[bytes, Path], Any] = jsonfile.parse
              ) -> tuple[bytes, Any, CorruptFile | None]:
    """Like :func:`read_settled`, but a file that still does not parse gives its last bytes and why."""
    pauses = iter(RETRY_PAUSES)
    while True:
        raw = read_shared(path, timeout)
        try:
            return raw, parse(raw, path), None
        except CorruptFile as exc:
            pause = next(pauses, None)
            if pause is None:
                return raw, None, exc
        time.sleep(pause)
