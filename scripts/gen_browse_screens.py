#!/usr/bin/env python3
"""Write the screenshots of docs/browse/: ``praisonmem browse`` on the example home (read-only), as Textual's SVG
screenshots (under its pilot) and as ``tmux capture-pane`` text (in a real tmux), at 100x30 and 80x24.

Run from anywhere: ``python scripts/gen_browse_screens.py`` (needs the tui extra and tmux)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "browse"
HOME = "examples/home"  # relative: the screens show the path as the docs' examples name it
SIZES = ((100, 30), (80, 24))


async def svgs(width: int, height: int) -> None:
    from praisonmem.core.paths import resolve
    from praisonmem.tui.app import BrowseApp
    from praisonmem.tui.source import Options

    app = BrowseApp(Options(paths=resolve(HOME, None, env={})))
    async with app.run_test(size=(width, height)) as pilot:
        async def settle(condition) -> None:
            for _ in range(400):
                if condition():
                    break
                await pilot.pause(0.05)
            await pilot.pause(0.3)

        await settle(lambda: app.loaded.is_set() and app.shown_item is not None)
        app.save_screenshot(f"main-{width}x{height}.svg", str(OUT))
        await pilot.press("slash")
        await pilot.press(*"alfama")
        await settle(lambda: app.hits is not None)
        app.save_screenshot(f"search-{width}x{height}.svg", str(OUT))
        await pilot.press("enter", "enter")
        await settle(lambda: app.shown_item is not None and app.shown_item.item == "compacted-demo")
        app.save_screenshot(f"transcript-{width}x{height}.svg", str(OUT))
        await pilot.press("t")
        await pilot.pause(0.3)
        app.save_screenshot(f"next-turn-{width}x{height}.svg", str(OUT))
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        app.save_screenshot(f"keys-{width}x{height}.svg", str(OUT))
        await pilot.press("escape", "q")


def captures(width: int, height: int) -> None:
    tmux = shutil.which("tmux")
    if tmux is None:
        raise SystemExit("tmux is needed for the capture-pane screens")
    with tempfile.TemporaryDirectory() as tmp:
        sock = str(Path(tmp) / "sock")
        env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
        run = lambda *args: subprocess.run([tmux, "-S", sock, *args], check=True, capture_output=True,  # noqa: E731
                                           text=True, env=env).stdout
        run("-f", os.devnull, "new-session", "-d", "-s", "b", "-x", str(width), "-y", str(height), "-c", str(REPO),
            f"{sys.executable} -m praisonmem --home {HOME} browse")

        def until(text: str) -> str:
            for _ in range(600):
                screen = run("capture-pane", "-p", "-t", "b")
                if text in screen:
                    time.sleep(0.5)
                    return run("capture-pane", "-p", "-t", "b")
                time.sleep(0.1)
            raise SystemExit(f"timed out waiting for {text!r}")

        (OUT / f"main-{width}x{height}.txt").write_text(until("Sessions (12)"), encoding="utf-8")
        run("send-keys", "-t", "b", "/")
        time.sleep(0.5)
        run("send-keys", "-t", "b", "-l", "alfama")
        (OUT / f"search-{width}x{height}.txt").write_text(until("2 hits"), encoding="utf-8")
        run("send-keys", "-t", "b", "Enter")
        run("send-keys", "-t", "b", "Enter")
        (OUT / f"transcript-{width}x{height}.txt").write_text(until("Found Hotel Alfama"), encoding="utf-8")
        run("send-keys", "-t", "b", "q")
        run("kill-server")


def main() -> None:
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    OUT.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        asyncio.run(svgs(width, height))
        captures(width, height)
    print(f"wrote {len(list(OUT.iterdir()))} files in {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
