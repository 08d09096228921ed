"""Ctrl-C in the CLI process, from its first line to its exit: always the one line and exit 130.

Python raises KeyboardInterrupt where the main thread happens to be. Raised inside a callback Python calls
itself (an import lock's weakref, a ``__del__``) it is swallowed with an "Exception ignored" traceback on
stderr, and some library code catches it outright; either way the command runs on, or waits on at a
prompt. :func:`install` (called by the entry point before anything heavy is imported) keeps Python's
behaviour, silences those reports of a KeyboardInterrupt, and raises it again (SIGALRM, every
:data:`REPEAT` s, at once after a swallowed one) until :func:`answered` says the interrupt is being
reported; :func:`waiting` covers a prompt, where a Ctrl-C can land just before the read that waits
for a key. :func:`seen` lets the entry point end as interrupted a command whose Ctrl-C was lost all the
same. A timer, not a thread: the fork pool's workers inherit no timer. Imported by nothing else, so a
program importing praisonmem keeps its own handlers.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import Any  # nothing heavier: this runs before the CLI's imports, and a Ctrl-C may come during it

REPEAT = 1.0  # time enough for a raised KeyboardInterrupt to unwind (temp files removed, workers reaped)
TICK = 0.2  # while waiting at a prompt
_installed = False
_seen = False
_answered = False
_stopped = False


_again_at = float("inf")  # when an unanswered Ctrl-C is raised again


def _handler(signum: int, frame: Any) -> None:
    global _seen, _again_at
    _seen = True
    _again_at = time.monotonic() + REPEAT
    signal.setitimer(signal.ITIMER_REAL, REPEAT, REPEAT)
    raise KeyboardInterrupt


def _alarm(signum: int, frame: Any) -> None:
    """Raise a Ctrl-C still not answered when it is due again; otherwise a tick (a prompt's, or one that
    was pending when the Ctrl-C came), after which a blocked read resumes."""
    if _seen and not _answered and time.monotonic() >= _again_at:
        raise KeyboardInterrupt


def install() -> None:
    global _installed
    _installed = True
    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGALRM, _alarm)
    default = sys.unraisablehook

    def unraisable(report: Any) -> None:
        if not issubclass(report.exc_type, KeyboardInterrupt):
            default(report)
            return
        global _again_at
        _again_at = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, 0.001, REPEAT)  # swallowed: raise it again, outside this hook

    sys.unraisablehook = unraisable


def seen() -> bool:
    """Whether a Ctrl-C reached this process (whether or not it was raised where it could be handled)."""
    return _seen


def stopped() -> None:
    """The command ended on a Ctrl-C as its normal way out (``session watch``, as ``tail -f``): it has said
    what it had to, so the process exits 130 with no error line."""
    global _stopped
    _stopped = True
    answered()


def was_stopped() -> bool:
    return _stopped


def answered() -> None:
    """The interrupt is being reported: stop raising it again."""
    global _answered
    _answered = True
    if _installed:
        signal.setitimer(signal.ITIMER_REAL, 0)


class waiting:  # noqa: N801 - used as ``with interrupts.waiting():``, like a contextmanager function
    """Around a blocking read of the terminal (a prompt): a Ctrl-C that lands between Python's last check
    for signals and the read itself would otherwise wait for the next key; a tick every :data:`TICK` s
    wakes the read, and Python then runs the pending handler."""

    def __enter__(self) -> None:
        self.ticking = _installed and not _seen
        if self.ticking:
            signal.setitimer(signal.ITIMER_REAL, TICK, TICK)

    def __exit__(self, *exc: object) -> None:
        if self.ticking and not _seen:
            signal.setitimer(signal.ITIMER_REAL, 0)


def ignore() -> None:
    """For the last moments of the process: the command has finished, so a Ctrl-C now changes nothing."""
    answered()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
