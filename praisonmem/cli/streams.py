"""The standard streams when they are closed or fail.

A shell's ``>&-`` (or a parent that closed the descriptor) starts praisonmem without fd 0, 1 or 2, and
Python then sets ``sys.stdin``/``sys.stdout``/``sys.stderr`` to ``None``. :func:`stand_in` puts
``/dev/null`` on each missing descriptor, so no file praisonmem opens later can be given fd 1 and
receive its output, and makes the stream one that says it is closed: reading stdin or writing
stdout fails with one line and exit 5 (docs/exit-codes-and-json.md, "Exit codes"); writing stderr goes nowhere.

While a command runs, :class:`GuardedStdout` turns a failed write into :class:`StdoutClosed` (the
reader went away: exit 141, quietly, as for a tool killed by SIGPIPE) or :class:`StdoutFailed`
(closed, full, an I/O error: exit 5), and :class:`GuardedStderr` drops what stderr cannot take, so a
message that cannot be shown never changes how the command ends.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

_NAMES = ("stdin", "stdout", "stderr")


class StdoutClosed(Exception):
    """stdout's reader went away (``| head``); deliberately not an OSError, which Typer would catch."""


class StdoutFailed(Exception):
    """stdout could not be written for another reason (closed, a full disk): ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def closed_error(name: str) -> OSError:
    return OSError(errno.EBADF, f"{'standard input' if name == 'stdin' else name} is closed")


class ClosedStream:
    """What ``sys.stdin``/``sys.stdout`` is when the descriptor was closed at start-up: every read and
    write fails as a closed descriptor does (EBADF), and it is no terminal."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False  # a stream object that exists; its descriptor is what is missing
        self.encoding = "utf-8"
        self.errors = "strict"

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise closed_error(self.name)

    read = readline = readlines = write = writelines = _fail

    def flush(self) -> None:
        pass  # nothing is ever buffered (and Python flushes stdout at exit)

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise closed_error(self.name)

    @property
    def buffer(self) -> ClosedStream:
        return self


def stand_in() -> None:
    """For each standard descriptor closed at start-up: ``/dev/null`` on it (no file praisonmem opens can
    become fd 0, 1 or 2), and a :class:`ClosedStream` (stderr: a stream that writes to ``/dev/null``)."""
    for fd, name in enumerate(_NAMES):
        if getattr(sys, name) is not None:
            continue
        try:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        except OSError:
            null = -1
        if null not in (-1, fd):  # fd is free, so the lowest free descriptor is it unless a lower one is too
            os.dup2(null, fd)
            os.close(null)
        if name == "stderr":
            sys.stderr = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False) \
                if null != -1 else ClosedStream(name)
        else:
            setattr(sys, name, ClosedStream(name))


def reason(exc: BaseException) -> str:
    """Why stdout could not be written, for the one error line."""
    if isinstance(exc, ValueError) or getattr(exc, "errno", None) == errno.EBADF:
        return "stdout is closed"
    from praisonmem.core.errors import os_reason

    return f"stdout: {os_reason(exc) if isinstance(exc, OSError) else exc}"


class GuardedStdout:
    """sys.stdout while a command runs: a failed write or flush raises :class:`StdoutClosed` or
    :class:`StdoutFailed`, which the CLI reports (never Typer, which would catch an OSError)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError as exc:
            raise StdoutClosed from exc
        except (OSError, ValueError) as exc:  # ValueError: a stream closed in this process
            raise StdoutFailed(reason(exc)) from exc

    def write(self, text: Any) -> Any:
        return self._call("write", text)

    def writelines(self, lines: Any) -> None:
        self._call("writelines", lines)

    def flush(self) -> None:
        self._call("flush")

    @property
    def buffer(self) -> GuardedStdout:
        try:
            raw = self._stream.buffer
        except AttributeError as exc:  # an in-memory text stream (tests) has none
            raise StdoutFailed("stdout takes no bytes") from exc
        return GuardedStdout(raw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class GuardedStderr:
    """sys.stderr while a command runs: what it cannot take (closed, full) is dropped, and the descriptor
    is pointed at ``/dev/null`` so the interpreter's flush at exit fails no more."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError):
            silence(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            silence(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def silence(stream: Any) -> None:
    """``/dev/null`` on ``stream``'s descriptor: Python flushes the standard streams at exit, and a closed
    pipe or a full disk would fail (and print about it) again."""
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
