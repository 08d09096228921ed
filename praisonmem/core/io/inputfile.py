"""Reading an input file named on the command line: only a regular file (or ``-``, standard input), and at
most :data:`MAX_INPUT_BYTES` of it.

A named pipe with no writer would block a reader forever and ``/dev/zero`` would fill its memory, so an
input that must be a file (an import, a replacement, the config file, a backup archive) is opened
non-blocking and refused unless it is a regular file (exit 2); one larger than the limit is refused before
it is read, and standard input stops at the limit (exit 4). Kept free of heavy imports: the config file is
read through it by every command.

The data files praisonmem reads (session files, spill records) are opened by the same rule
(:func:`open_data`): a regular file, or a link to one, opened non-blocking; a named pipe, socket or device
is refused (:class:`~praisonmem.core.errors.NotRegularFile`, exit 4) without being read, and a link is
looked through before it is opened, since opening some devices acts (a watchdog arms, a tape rewinds).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from praisonmem.core.errors import IOFailure, NotFound, NotRegularFile, Refused, UsageError, io_failure, os_reason

STDIN = "-"
# The most praisonmem reads from one input file: the one documented limit (docs/exit-codes-and-json.md, "Input size").
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
            reason = "standard input is closed" if exc.errno == errno.EBADF else f"standard input: {os_reason(exc)}"
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
    fd, st = open_nonblocking(path)
    if not stat.S_ISREG(st.st_mode):
        if fd is not None:
            os.close(fd)
        raise UsageError(f"{path}: is {file_kind(st.st_mode)}, not a regular file (praisonmem reads its {what} "
                         "from a regular file" + (", or - for standard input)" if what == "input file" else ")"))
    assert fd is not None
    return fd


# What O_NOFOLLOW fails with when the last component is a link: ELOOP on Linux, EMLINK/EFTYPE on the BSDs.
_LINK_ERRNOS = frozenset(n for n in (errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", None)) if n is not None)


def open_nonblocking(path: str | os.PathLike[str]) -> tuple[int | None, os.stat_result]:
    """A read-only, non-blocking descriptor on ``path`` and the ``stat`` of what it names; or ``None`` and the
    ``stat`` of something that is neither a regular file nor a directory, when ``path`` is a link to it or a
    socket (never opened: opening a device can act). :class:`NotFound` when nothing is there, or when the name
    cannot be passed to the system at all (a lone surrogate, a NUL: no file can have it); :class:`IOFailure`
    for any other error (a link loop, permissions)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            if exc.errno not in _LINK_ERRNOS:
                raise
            st = os.stat(path)  # a link: what it names, before it is opened (a loop fails here)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                return None, st
            fd = os.open(path, flags)
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        odd = _odd_stat(path)  # a socket cannot be opened at all (ENXIO): say what it is
        if odd is not None:
            return None, odd
        raise io_failure(path, exc) from exc
    except ValueError as exc:  # UnicodeEncodeError, "embedded null byte"
        raise NotFound(f"{path}: no such file") from exc
    try:
        return fd, os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise io_failure(path, exc) from exc


def _odd_stat(path: str | os.PathLike[str]) -> os.stat_result | None:
    """The ``stat`` of what ``path`` names when that is neither a regular file nor a directory (``None``
    otherwise, or when it cannot be told)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) else st


def open_data(path: str | os.PathLike[str]) -> tuple[int, int]:
    """A read-only descriptor on a data file praisonmem reads (a session file, a spill record): a regular file or
    a link to one, and its size. A directory is :class:`IOFailure`, a named pipe, socket or device
    :class:`NotRegularFile`; neither blocks nor is read."""
    fd, st = open_nonblocking(path)
    if stat.S_ISREG(st.st_mode):
        assert fd is not None
        return fd, st.st_size
    if fd is not None:
        os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise IOFailure(f"{path}: is a directory, not a file")
    raise NotRegularFile(str(path), f"is {file_kind(st.st_mode)}, not a regular file")


def read_data(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the data file ``path`` (:func:`open_data`'s rule), read with one ``read`` when its size is
    right (no buffered file object: a listing reads thousands)."""
    fd, size = open_data(path)
    try:
        first = os.read(fd, size + 1)  # a regular file reads in full up to its end: fewer bytes means the end
        if size and len(first) <= size:
            return first
        chunks = [first]  # it grew, or says size 0 (as /proc files do): read to the end
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise io_failure(path, exc) from exc
    finally:
        os.close(fd)


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
