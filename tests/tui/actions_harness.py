"""A small Textual app that calls the browser's action hook, so the actions' tests need no browser.

It keeps what the actions told it (``notes``: each notification's text and severity) and each
``refresh_selection`` call (``refreshed``); :func:`settle` waits until the actions' workers are done and the
screen has caught up.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from praisonmem.tui import actions
from praisonmem.tui.model import Selection


class Harness(App):
    def __init__(self, selection: Selection) -> None:
        super().__init__()
        self.selection = selection
        self.notes: list[tuple[str, str]] = []
        self.refreshed: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield Static("harness", id="main")

    def act(self, key: str, selection: Selection | None = None) -> None:
        actions.perform(self, key, selection or self.selection)

    def refresh_selection(self, item: str | None = None) -> None:
        self.refreshed.append(item)

    def notify(self, message: str, **kwargs: Any) -> None:
        self.notes.append((message, kwargs.get("severity", "information")))
        super().notify(message, **kwargs)


async def settle(app: App, pilot: Any) -> None:
    """Until no action worker runs and the screen has taken what they sent (a worker hands its result over)."""
    for _ in range(200):
        await pilot.pause()
        running = [w for w in app.workers if not w.is_finished]
        if not running:
            await pilot.pause()
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the actions' workers did not finish")


def text_of(app: App, selector: str) -> str:
    """The text a widget of the current screen shows."""
    return str(app.screen.query_one(selector, Static).render())


def screen_lines(app: App) -> list[str]:
    """Every line the current screen's widgets render, as the terminal gets them."""
    lines = []
    for widget in app.screen.query("*"):
        for y in range(widget.size.height):
            lines.append(widget.render_line(y).text)
    return lines


def contents(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``root`` with its mode and bytes (not its mtime: two homes written at other times)."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (st.st_mode, path.read_bytes() if path.is_file() else None)
    return out


def twin(home: Path, where: Path) -> Path:
    """A copy of ``home`` (modes and times kept) for the command to run on."""
    shutil.copytree(home, where, copy_function=shutil.copy2)
    return where
