"""Output targets: the one rule for every ``-o FILE`` (session export, upsonic export, backup create).

* ``-`` is standard output.
* A character device or a FIFO (``/dev/null``, a named pipe) is opened for writing
  and written through, never replaced; so is a symlink to one (``/dev/stdout``,
  ``/dev/fd/N``, a shell's ``>(...)``).
* A regular file, or a name that does not exist yet, is written to a temp file
  beside it (0600), fsynced and renamed over it: a failed export never leaves half
  a file, and a reader never sees one.
* Anything else is refused (:class:`Refused`, exit 4) and left as it is: a
  directory, a socket, a block device, and a symlink to a file or to nothing
  (replacing the link would surprise whoever made it; writing through it would
  overwrite a file praisonmem was not named).
* Where a command takes a directory to write a new file into (``backup create -o
  DIR``), it must be a directory itself (:func:`directory`): a symlink to one is
  refused, as praisonmem writes nothing through a link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from praisonmem.core.io import jsonfile
from praisonmem.core.errors import Refused, UsageError, io_failure

STDOUT = "-"


def is_stdout(target: str | os.PathLike[str]) -> bool:
    return os.fspath(target) == STDOUT


def kind(target: str | os.PathLike[str]) -> str:
    """``"stdout"``, ``"stream"`` (written through) or ``"file"`` (replaced); refuses anything else."""
    if is_stdout(target):
        return "stdout"
    if not os.fspath(target):
        raise UsageError("the output file name is empty (give a file name, or - for stdout)")
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return "file"
    except OSError as exc:
        raise io_failure(target, exc) from exc
    if stat.S_ISREG(mode):
        return "file"
    if _is_stream(mode):
        return "stream"
    if stat.S_ISLNK(mode):
        try:
            pointed = os.stat(target).st_mode
        except OSError:
            pointed = 0
        if _is_stream(pointed):
            return "stream"
        what = "a missing file" if not pointed else "a file" if stat.S_ISREG(pointed) else _describe(pointed)
        raise Refused(f"{target}: is a symbolic link to {what}; praisonmem neither replaces a link nor writes "
                      "through one to a file (give the real path, or - for stdout); nothing written")
    if stat.S_ISDIR(mode):
        raise Refused(f"{target}: is a directory, not a file; nothing written")
    raise Refused(f"{target}: is {_describe(mode)}, not a file; nothing written")


def directory(target: str | os.PathLike[str]) -> bool:
    """Whether ``target`` is a directory (to write a new file into); a symlink to one is refused, never followed."""
    if is_stdout(target):
        return False
    try:
        mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise io_failure(target, exc) from exc
    if stat.S_ISLNK(mode) and os.path.isdir(target):
        raise Refused(f"{target}: is a symbolic link to a directory; praisonmem writes nothing through a link "
                      "(give the directory itself); nothing written")
    return stat.S_ISDIR(mode)


def _is_stream(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _describe(mode: int) -> str:
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


@contextmanager
def opened(target: str | os.PathLike[str], *, stdout: BinaryIO | None = None,
           binary: bool = False) -> Iterator[BinaryIO]:
    """A binary handle on ``target`` following the rule above; a regular file is replaced when the
    block ends without an error. ``binary`` output (a compressed archive) is never sent to a terminal."""
    how = kind(target)
    if how == "stdout":
        if stdout is None:
            raise UsageError("'-' (stdout) is not available here")
        if binary and _isatty(stdout):
            raise UsageError("not writing a compressed archive to a terminal; redirect stdout or give a file")
        yield stdout
        stdout.flush()
    elif how == "stream":
        with _stream(target, binary) as handle:
            yield handle
    else:
        with jsonfile.replacing(target) as handle:
            yield handle


def write(target: str | os.PathLike[str], data: bytes, *, stdout: BinaryIO | None = None) -> None:
    with opened(target, stdout=stdout) as handle:
        handle.write(data)


@contextmanager
def _stream(target: str | os.PathLike[str], binary: bool) -> Iterator[BinaryIO]:
    # No O_CREAT and no O_TRUNC: if the name was swapped for a regular file since it was
    # looked at, opening it changes nothing and the fstat below refuses it.
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise io_failure(target, exc, "cannot open for writing") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not _is_stream(mode):
            raise Refused(f"{target}: changed while being opened (now {_describe(mode)}); nothing written")
        if binary and os.isatty(fd):
            raise UsageError(f"{target}: not writing a compressed archive to a terminal")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "wb") as handle:
        yield handle


def _isatty(handle: BinaryIO) -> bool:
    try:
        return handle.isatty()
    except (AttributeError, ValueError):
        return False
