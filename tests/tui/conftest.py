"""The browser under Textual's pilot: a helper that opens it on a home and waits for the first listing."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

import textual  # noqa: E402,F401  the tui extra: `test` installs it, so these run (never skipped)


def strip_rules(text: str) -> str:
    """``session show`` on a terminal draws each turn's heading with a ``── `` lead; piped (as tests run it), not."""
    return "\n".join(line.removeprefix("── ") for line in text.splitlines())


def options(home: Path, **kw: Any):
    from praisonmem.core.paths import resolve
    from praisonmem.tui.source import Options

    return Options(paths=resolve(str(home), None, env={}), **kw)


async def wait_for(pilot: Any, condition, timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds (each step a pause of the pilot, never a bare sleep)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {condition.__doc__ or condition}")
        await pilot.pause(0.05)


@contextlib.asynccontextmanager
async def browsing(home: Path, size: tuple[int, int] = (140, 40), **kw: Any):
    """The app on ``home`` (and its pilot), once the first listing and the first item are on screen."""
    from praisonmem.tui.app import BrowseApp

    app = BrowseApp(options(home, **kw))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.loaded.is_set())
        await wait_for(pilot, lambda: app.selected is None or shown(app) != "")
        yield app, pilot


def shown(app: Any, pane: str = "show") -> str:
    """The plain text of a detail pane ("show": the transcript; "working": next turn)."""
    return app.panes[pane]


def listed(app: Any) -> list[list[str]]:
    """The middle pane's rows, as their cells (what the list draws, before cutting to width)."""
    rowlist = app.query_one("#list")
    return [rowlist.cells(row) for row in rowlist.rows]


def screen_text(app: Any) -> str:
    """Every character on the screen (Textual's SVG screenshot, its markup taken off), one line per row."""
    import html
    import re

    svg = app.export_screenshot()
    lines = []
    for match in re.finditer(r'<text class="[^"]*" x="[^"]*" y="([^"]*)"[^>]*>(.*?)</text>', svg, re.S):
        lines.append((float(match.group(1)), html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))))
    rows: dict[float, str] = {}
    for y, text in lines:
        rows[y] = rows.get(y, "") + text
    return "\n".join(rows[y].replace("\xa0", " ") for y in sorted(rows))


@pytest.fixture
def tty_cli(cli, monkeypatch):
    """``cli`` as on a terminal ``width`` columns wide (a pane's: :func:`pane_width`), as the panes draw (local times to the minute, rules, wrapping)."""
    import praisonmem.cli.output as output

    def invoke(*args: str, width: int = 100):
        with monkeypatch.context() as m:
            m.setattr(output, "stdout_is_tty", lambda: True)
            m.setenv("COLUMNS", str(width))
            return cli(*args)

    return invoke


def pane_width(app: Any) -> int:
    """The columns the detail pane renders an item in."""
    return max(40, app.query_one("#detail").size.width - 4 or 80)
