"""A home of 100,000 sessions (generated as the benchmarks generate theirs): the browser lists every one, in
``session list``'s order, and draws only the rows on screen; the cursor reaches the last row and back. (How
fast: benchmarks/browse.py.)"""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from tests.conftest import REPO
from tests.tui.conftest import browsing, options, screen_text, wait_for

SESSIONS = 100_000


@pytest.fixture(scope="module")
def huge_home(tmp_path_factory):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import _data
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    home = tmp_path_factory.mktemp("huge") / "home"
    _data.write_sessions(home / "sessions", SESSIONS, 1)
    return home


def test_a_100000_session_home_is_listed_whole_and_only_the_rows_on_screen_are_drawn(huge_home, monkeypatch):
    from praisonmem.core import sessions
    from praisonmem.tui import source

    expected = [r["session_id"] for r in sessions.list_sessions(options(huge_home).paths, limit=0,
                                                                  workspace=sessions.workspace_id).rows]
    assert len(expected) == SESSIONS
    drawn = []
    cells = source.CELLS["session"]
    monkeypatch.setitem(source.CELLS, "session", lambda row: drawn.append(row["session_id"]) or cells(row))

    async def go():
        async with browsing(huge_home, size=(120, 30)) as (app, pilot):
            rowlist = app.query_one("#list")
            ids = [row["session_id"] for row in rowlist.rows]
            first = screen_text(app)
            at_open = len(drawn)
            await pilot.press("end")
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == expected[-1])
            last = screen_text(app)
            await pilot.press("pageup", "home")
            await wait_for(pilot, lambda: app.shown_item.item == expected[0])
            return ids, first, last, at_open, rowlist.cursor

    ids, first, last, at_open, cursor = asyncio.run(go())
    assert ids == expected
    assert cursor == 0
    assert expected[0] in first and expected[-1] not in first
    assert expected[-1] in last and re.search(rf"Session +{expected[-1]}", last)
    # the id column is sized from the first 2,000 rows; then each frame draws the ~28 rows it shows
    assert at_open < 2_000 + 200
