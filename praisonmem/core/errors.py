"""Errors and exit codes: the one place that says which failure exits how.

The CLI turns a :class:`PraisonMemError` into a one-line message on stderr (or a
JSON error object with ``--json``) and exits with :attr:`PraisonMemError.exit_code`.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1  # `check` found problems, or a batch finished with some items failed
EXIT_USAGE = 2  # bad option, bad value, bad date
EXIT_NOT_FOUND = 3  # session, memory id, user, file
EXIT_REFUSED = 4  # target exists, lock timeout, corrupt file, no confirmation
EXIT_IO = 5  # I/O or permission error
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success (a search with no hits is still 0)",
    EXIT_PROBLEMS: "check found problems, or a batch finished with some items failed",
    EXIT_USAGE: "usage error (bad option, bad value, bad date)",
    EXIT_NOT_FOUND: "not found (session, memory id, user, file)",
    EXIT_REFUSED: (
        "refused: target exists, lock not acquired in time, file corrupt so not "
        "rewritten, confirmation missing in a non-interactive run"
    ),
    EXIT_IO: "I/O or permission error",
    EXIT_INTERRUPTED: "interrupted",
}


class PraisonMemError(Exception):
    """Base class: an expected failure with a message meant for the user."""

    exit_code = EXIT_IO
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


class ConfirmationRequired(Refused):
    code = "confirmation_required"


class IOFailure(PraisonMemError):
    exit_code = EXIT_IO
    code = "io_error"


class ProblemsFound(PraisonMemError):
    exit_code = EXIT_PROBLEMS
    code = "problems"
