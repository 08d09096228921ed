"""A pager for long human output on a terminal, as git and gh page theirs.

The pager is ``$PRAISONMEM_PAGER`` (or the config key ``pager`` set to a command), else ``$PAGER``, else
``less -FRX`` when ``less`` is installed (``-F``: it quits at once when the text fits the screen; ``-R``: colours
pass; ``-X``: the text stays on the screen after it quits). ``cat`` or an empty command means none, as for git.
Nothing is paged when stdout is not a terminal, with ``--no-pager``, with ``pager = false``, or for JSON.

While the command runs its stdout is kept (a stand-in that is a terminal as the real one is, so tables still fit
and colours still show); when it is done, the text goes to the pager when it is longer than the screen, else
straight to the terminal (no pager is started for a text that fits: what ``less -F`` would do, without the
pager's own terminal codes). A command that fails or is interrupted prints what it had written, as
it would have without a pager. The pager quitting before the end (``q`` in less) is the reader's choice: not an
error. While the pager runs, Ctrl-C is the pager's (less uses it to stop a search), as in git.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from praisonmem.cli.state import State

DEFAULT = "less -FRX"
NOT_FOUND = 127  # what the shell exits with when the pager's command does not exist


class Kept(io.StringIO):
    """stdout while a command's output waits for the pager: a terminal, as the real stdout is. What praisonmem
    says on stderr meanwhile (a note, a warning) is kept with it, in order (:meth:`err`), so that a note comes
    after the table it is about, as it would unpaged."""

    encoding = "utf-8"

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[tuple[bool, str]] = []  # (for stdout, text), in the order they were written

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.chunks.append((True, text))
        return super().write(text)

    def err(self, text: str) -> None:
        self.chunks.append((False, text))
        super().write(text)

    def replay(self, out: Any, err: Any) -> None:
        """What was kept, to the streams it was meant for, in order."""
        for to_out, text in self.chunks:
            (out if to_out else err).write(text)
        err.flush()


def command(state: State) -> str | None:
    """The pager's command line for this invocation, or None for no pager."""
    configured = state.setting("pager")
    if configured is False:
        return None
    chosen = configured if isinstance(configured, str) else state.settings.env.get("PAGER")
    if chosen is None:
        chosen = DEFAULT if shutil.which("less") else ""
    return None if chosen.strip() in ("", "cat") else chosen


@contextmanager
def paging(state: State, *, machine: bool) -> Iterator[None]:
    """Page what the block writes to stdout when it is longer than the screen (see the module's docstring);
    ``machine``: JSON was asked for, never paged."""
    real = sys.stdout
    if machine or state.no_pager or not _is_tty(real):
        yield
        return
    pager = command(state)
    if pager is None:
        yield
        return
    from praisonmem.cli import output

    kept = Kept()
    sys.stdout = kept
    output.hold_stderr(kept.err if _is_tty(sys.stderr) else None)  # the same terminal: in the same order
    try:
        yield
    except BaseException:
        sys.stdout = real
        output.hold_stderr(None)
        kept.replay(real, sys.stderr)
        raise
    sys.stdout = real
    output.hold_stderr(None)
    text = kept.getvalue()
    if _rows(text) < _screen()[0]:
        kept.replay(real, sys.stderr)
        return
    show(pager, text, real)


def show(pager: str, text: str, real: Any) -> None:
    """Run ``pager`` (through the shell, as git does) with ``text`` on its stdin and the terminal as its stdout
    (the notes kept with the text go through it too, as git sends its stderr to the pager)."""
    import signal
    import subprocess

    real.flush()
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # what git sets: a plain `PAGER=less` quits on a short text too
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError as exc:
        _unpaged(pager, str(exc.strerror or exc), text, real)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the pager's, while it runs (less stops a search)
    try:
        proc.communicate(text.encode("utf-8", "backslashreplace"))  # a pager quitting early is not an error
    finally:
        signal.signal(signal.SIGINT, previous)
    if proc.returncode == NOT_FOUND:
        _unpaged(pager, "command not found", text, real)


def _unpaged(pager: str, why: str, text: str, real: Any) -> None:
    from praisonmem.cli.output import warn

    warn(f"could not run the pager '{pager}' ({why}); set PRAISONMEM_PAGER, or use --no-pager", always=True)
    real.write(text)


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _screen() -> tuple[int, int]:
    """The terminal's lines and columns (``LINES``/``COLUMNS`` first, as Rich reads them; 24×80 when unknown)."""
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno())
        lines, columns = size.lines, size.columns
    except (AttributeError, OSError, ValueError):
        lines = columns = 0
    lines = _number(os.environ.get("LINES")) or lines or 24
    columns = _number(os.environ.get("COLUMNS")) or columns or 80
    return lines, columns


def _number(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


def _rows(text: str) -> int:
    """How many screen lines ``text`` takes: a line wider than the terminal takes more than one."""
    import re

    from rich.cells import cell_len

    columns = _screen()[1]
    plain = re.sub("\x1b\\[[0-9;?]*[A-Za-z]", "", text)
    lines = plain.removesuffix("\n").split("\n") if plain else []
    return sum(max(1, -(-cell_len(line) // columns)) for line in lines)
