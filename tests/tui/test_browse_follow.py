"""``w`` in the browser follows the open session as ``session watch`` does, while the real library
(praisonaiagents 1.7.17's own session stores, in another process) appends turns: each turn shows up in the
transcript pane, which is then ``session show``'s rendering of the session as it is now."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from tests.compat.conftest import library_env
from tests.tui.conftest import browsing, pane_width, shown, wait_for

pytest.importorskip("praisonaiagents")

WRITER = """
    import sys
    from praisonaiagents.paths import get_sessions_dir
    kind, sid = sys.argv[1], sys.argv[2]
    if kind == "json":
        from praisonaiagents.session.store import DefaultSessionStore
        store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    else:
        from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
        store = SqliteTranscriptStore(session_dir=str(get_sessions_dir()))
    assert store.add_message(sid, "user", "seed")
    print("seeded", flush=True)
    for line in sys.stdin:  # one turn per line asked for
        n = int(line)
        assert store.add_message(sid, "user" if n % 2 == 0 else "assistant", f"turn-{n}")
        print("added", n, flush=True)
"""


@pytest.mark.parametrize("store", ["json", "sessions.db"])
def test_w_follows_the_open_session_while_the_library_appends_turns(cli, tty_cli, tmp_path, store):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), "json" if store == "json" else "db",
                               "live", ], env=library_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def add(n: int) -> None:
        writer.stdin.write(f"{n}\n")
        writer.stdin.flush()
        assert writer.stdout.readline().split() == ["added", str(n)]

    async def go():
        async with browsing(home) as (app, pilot):
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == "live")
            assert "turn-0" not in shown(app)
            await pilot.press("w")
            await wait_for(pilot, lambda: app.followed == "live")
            await pilot.pause(0.3)  # the watch has read the session before the first turn is written
            for n in range(6):
                await asyncio.get_running_loop().run_in_executor(None, add, n)
                await wait_for(pilot, lambda: f"turn-{n}" in shown(app), timeout=30)
            status = str(app.query_one("#status").render())
            text = shown(app)
            await pilot.press("w")  # stops following
            assert app.followed is None
            return status, text, pane_width(app)

    try:
        assert writer.stdout.readline().strip() == "seeded"
        status, text, width = asyncio.run(go())
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    assert writer.returncode == 0, writer.stderr.read()
    assert "following live" in status and "new turn" in status
    show = tty_cli("--home", home, "session", "show", "live", "--store", store, width=width)
    assert text == show.stdout.rstrip("\n")
    assert [line for line in text.splitlines() if line.startswith(("seed", "turn-"))] == \
        ["seed"] + [f"turn-{n}" for n in range(6)]
