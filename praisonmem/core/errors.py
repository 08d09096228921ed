"""Errors and exit codes: the one place that says which failure exits how.

The CLI turns a :class:`PraisonMemError` into a one-line message on stderr (or a
JSON error object with ``--json``) and exits with :attr:`PraisonMemError.exit_code`.
:data:`EXIT_CODES` lists every code praisonmem exits with; the manual's table
(docs/exit-codes-and-json.md) and the man pages are checked against it.
"""

from __future__ import annotations

import os
from typing import Any

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_REFUSED = 4
EXIT_IO = 5
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in praisonmem, not in the user's input
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # what a Unix tool killed by SIGPIPE reports

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success (a search with no hits is still 0)",
    EXIT_PROBLEMS: "problems found (check, backup verify, a damaged backup), or a batch finished with some items "
                   "failed",
    EXIT_USAGE: "usage error (bad option, bad value, bad date, ambiguous name)",
    EXIT_NOT_FOUND: "not found (session, memory id, user, file)",
    EXIT_REFUSED: (
        "refused: target exists, lock not acquired in time, file corrupt so not "
        "rewritten, confirmation missing in a non-interactive run"
    ),
    EXIT_IO: "I/O or permission error",
    EXIT_INTERNAL: "internal error: a bug in praisonmem, please report it (PRAISONMEM_DEBUG=1 shows the traceback)",
    EXIT_INTERRUPTED: "interrupted",
    EXIT_BROKEN_PIPE: "stdout closed early (e.g. piped into head), as for any Unix tool killed by SIGPIPE",
}


class PraisonMemError(Exception):
    """Base class: an expected failure with a message meant for the user."""

    exit_code = EXIT_IO
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its class, message and attributes, whatever its __init__ takes: an error a scan worker sends
        # back that could not be rebuilt would kill the pool's result thread, and the scan would wait for ever.
        return _rebuilt, (type(self), self.message, dict(self.__dict__))


def _rebuilt(cls: type[PraisonMemError], message: str, state: dict[str, Any]) -> PraisonMemError:
    error = cls.__new__(cls, message)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class UsageError(PraisonMemError):
    exit_code = EXIT_USAGE
    code = "usage"


class AmbiguousName(UsageError):
    code = "ambiguous"


class NotFound(PraisonMemError):
    exit_code = EXIT_NOT_FOUND
    code = "not_found"


class Refused(PraisonMemError):
    exit_code = EXIT_REFUSED
    code = "refused"


class TargetExists(Refused):
    code = "exists"


class LockTimeout(Refused):
    code = "lock_timeout"


class CorruptFile(Refused):
    """A file that does not parse or has the wrong shape; it is never rewritten."""

    code = "corrupt"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class NotRegularFile(CorruptFile):
    """A file praisonmem must read that is a named pipe, a socket or a device (or a link to one): only regular
    files are read, so it is refused rather than waited on or read without end."""

    code = "not_regular_file"


class ConfirmationRequired(Refused):
    code = "confirmation_required"


class IOFailure(PraisonMemError):
    exit_code = EXIT_IO
    code = "io_error"


class ConnectionFailed(IOFailure):
    """A database server that cannot be reached, or refuses the connection."""

    code = "connection_failed"


class AuthFailed(ConnectionFailed):
    """A database server that refused the password (or got none)."""

    code = "auth_failed"


class ProblemsFound(PraisonMemError):
    exit_code = EXIT_PROBLEMS
    code = "problems"


def os_reason(exc: OSError) -> str:
    """Why an ``OSError`` happened, as a clause of a message: the C library's sentence in lower case ("no such
    file or directory"), as the rest of the line is."""
    text = str(exc.strerror or exc)
    return text[:1].lower() + text[1:] if exc.strerror else text


def io_failure(path: str | os.PathLike[str], exc: OSError, doing: str = "", then: str = "") -> IOFailure:
    """The one-line :class:`IOFailure` for an ``OSError`` on ``path``: ``<path>: [<doing>: ]<reason>[; <then>]``."""
    if isinstance(exc, PermissionError):
        reason = "permission denied"
    elif isinstance(exc, IsADirectoryError):
        reason = "is a directory, not a file"
    else:
        reason = os_reason(exc)
    return IOFailure(f"{path}: " + (f"{doing}: " if doing else "") + reason + (f"; {then}" if then else ""))
