"""Rich progress bars on stderr, only on a terminal and only for work over many files.

The bar is created lazily on the first update that reports enough work, so a
small run draws nothing. It never refreshes from a background thread: the
session readers fork worker processes, and forking while a refresh thread
holds the console's lock could hang a child.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.cli.output import quiet, stderr_is_tty

MIN_FILES = 300  # "past a few hundred files"
REFRESH_EVERY = 0.05


class _LazyBar:
    def __init__(self, description: str, minimum: int) -> None:
        self.description = description
        self.minimum = minimum
        self._progress: Any = None
        self._task: Any = None
        self._last = 0.0

    def update(self, done: int, total: int | None = None) -> None:
        """``total`` is ``None`` when the amount of work is not known up front (``check`` walking
        trees): the bar then appears once ``minimum`` files are done, without an end."""
        if self._progress is None:
            if (done if total is None else total) < self.minimum:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True, auto_refresh=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=total)
        self._progress.update(self._task, completed=done, total=total)
        now = time.monotonic()
        if now - self._last >= REFRESH_EVERY or (total is not None and done >= total):
            self._last = now
            self._progress.refresh()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


@contextmanager
def file_progress(description: str, minimum: int = MIN_FILES) -> Iterator[Callable[..., None] | None]:
    """A ``progress(done, total)`` callback, or ``None`` when stderr is not a terminal (or with -q)."""
    if not stderr_is_tty() or quiet():
        yield None
        return
    bar = _LazyBar(description, minimum)
    try:
        yield bar.update
    finally:
        bar.close()
