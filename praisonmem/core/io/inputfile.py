"""Reading an input file named on the command line: only a regular file (or ``-``, standard input), and at
most :data:`MAX_INPUT_BYTES` of it.

A named pipe with no writer would block a reader forever and ``/dev/zero`` would fill its memory, so an
input that must be a file (an import, a replacement, the config file, a backup archive) is opened
non-blocking and refused unless it is a regular file (exit 2); one larger than the limit is refused before
it is read, and standard input stops at the limit (exit 4). Kept free of heavy imports: the config file is
read through it by every command.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from praisonmem.core.errors import IOFailure, NotFound, Refused, UsageError, io_failure

STDIN = "-"
# The most praisonmem reads from one input file: the one documented limit (README, "Input size").
MAX_INPUT_BYTES = 256 << 20


def read_source(source: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The bytes of an input file named on the command line (at most ``limit``, default
    :data:`MAX_INPUT_BYTES`); ``-`` is standard input. Only a regular file is opened for reading."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    if os.fspath(source) == STDIN:
        import sys

        try:
            return _bounded(sys.stdin.buffer, STDIN, limit)
        except OSError as exc:  # closed (``<&-``), or opened for writing only
            reason = "standard input is closed" if exc.errno == errno.EBADF else f"standard input: {exc.strerror or exc}"
            raise IOFailure(reason) from exc
    return read_regular(source, limit=limit)


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None, what: str = "input file") -> bytes:
    """The bytes of ``path``, which must be a regular file (a pipe, device or directory is a usage error,
    found without blocking on it) of at most ``limit`` bytes (:class:`Refused` beyond it)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    fd = open_regular(path, what)
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise too_large(path, limit)
        try:
            return _bounded(handle, path, limit)
        except OSError as exc:
            raise io_failure(path, exc) from exc


def open_regular(path: str | os.PathLike[str], what: str = "input file") -> int:
    """A read-only descriptor on ``path`` when it is a regular file; opened non-blocking, so a named pipe
    with no writer is refused rather than waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        raise io_failure(path, exc) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UsageError(f"{path}: is {file_kind(mode)}, not a regular file (praisonmem reads its {what} "
                         "from a regular file" + (", or - for standard input)" if what == "input file" else ")"))
    return fd


def file_kind(mode: int) -> str:
    """What a non-regular file is, with its article, for messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def too_large(path: str | os.PathLike[str], limit: int) -> Refused:
    return Refused(f"{path}: larger than praisonmem's input limit of {limit >> 20} MiB ({limit} bytes); "
                   "nothing read")


def _bounded(handle: BinaryIO, path: str | os.PathLike[str], limit: int) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise too_large(path, limit)
    return data
