#!/usr/bin/env python3
"""``praisonmem browse`` on a large home, under Textual's pilot (in this process: a UI has no command line to
time). Not a row of the goals table and not part of run_all.py, like peak_memory.py.

On a generated home of ``--sessions`` sessions (``_data.session_home``; default 100,000 x ``--messages`` 1) and,
interleaved in every round, on a reference home of 10 sessions:

* listing: the first listing, ``source.tree`` (the ``session list --limit 0`` call the browser makes, its
  cache warm after the first round), once per round;
* open: from starting the app, with that listing already made, to its first screen of rows and the first
  session rendered (the goal: under a second at 100,000 sessions), and the same on the reference home;
* reload: the same in the open app (F5, its listing made already), without Textual's start-up;
* scroll: one PgDn, to the frame drawn after it, averaged over 20 pages;
* memory: what the open app allocates on top of the listing's rows (tracemalloc peak during the open), and
  the listing's own (tracemalloc of one ``source.tree``).

Prints medians over ``--rounds`` (default 3), the ratio to the reference, and the load average.
``python benchmarks/browse.py [--dir DIR] [--sessions N] [--messages M] [--rounds N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import _data

sys.path.insert(0, str(_data.REPO))

PAGES = 20


def options(home: Path, cache_dir: Path):
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.paths import resolve
    from praisonmem.tui.source import Options

    return Options(paths=resolve(str(home), None, env={}), cache=Cache(str(cache_dir), enabled=True))


async def open_app(opts, listing, *, scroll: bool, memory: bool) -> dict[str, float]:
    """Times of one open (and scroll) of the app, given the listing already made."""
    from praisonmem.tui import source
    from praisonmem.tui.app import BrowseApp

    real = source.tree
    source.tree = lambda *a, **k: listing  # the first listing was made: time what comes after it
    try:
        if memory:
            tracemalloc.start()
        started = time.perf_counter()
        app = BrowseApp(opts)
        async with app.run_test(size=(120, 30)) as pilot:
            while not (app.loaded.is_set() and app.shown_item is not None):
                await pilot.pause(0.001)
            await pilot.pause()  # the frame with them
            opened = time.perf_counter() - started
            figures = {"open": opened}
            if memory:
                figures["open_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2 ** 20
                tracemalloc.stop()
            # the same again in the open app (F5: the tree, the rows, the first item), without Textual's start-up
            app.loaded.clear()
            before = app.shown_item
            started = time.perf_counter()
            await pilot.press("f5")
            while not (app.loaded.is_set() and app.shown_item is not before):
                await pilot.pause(0.001)
            await pilot.pause()
            figures["reload"] = time.perf_counter() - started
            if scroll:
                started = time.perf_counter()
                for _ in range(PAGES):
                    await pilot.press("pagedown")
                    await pilot.pause()
                figures["page"] = (time.perf_counter() - started) / PAGES
            await pilot.press("q")
        return figures
    finally:
        source.tree = real


def listing_of(opts, memory: bool = False) -> tuple[object, float, float | None]:
    from praisonmem.tui import source

    if memory:
        tracemalloc.start()
    started = time.perf_counter()
    result = source.tree(opts)
    took = time.perf_counter() - started
    peak = None
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    return result, took, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = args.dir or Path(tempfile.mkdtemp(prefix="praisonmem-browse-"))
    data.mkdir(parents=True, exist_ok=True)
    big = _data.session_home(data, args.sessions, args.messages)
    small = _data.session_home(data, 10, args.messages)
    big_opts, small_opts = options(big, data / "cache-big"), options(small, data / "cache-small")
    figures: dict[str, list[float]] = {}

    def keep(name: str, value: float | None) -> None:
        if value is not None:
            figures.setdefault(name, []).append(value)

    for round_ in range(args.rounds):
        order = [("big", big_opts), ("small", small_opts)]
        for name, opts in order if round_ % 2 == 0 else order[::-1]:
            listing, took, peak = listing_of(opts, memory=(name == "big" and round_ == 0))
            keep(f"{name} listing", took)
            keep("big listing peak MiB", peak)
            result = asyncio.run(open_app(opts, listing, scroll=True, memory=(name == "big" and round_ == 0)))
            keep(f"{name} open", result["open"])
            keep(f"{name} page", result["page"])
            keep(f"{name} reload", result["reload"])
            keep("big open peak MiB", result.get("open_peak_mib"))
            rows = len(listing[1])
            assert rows == (args.sessions if name == "big" else 10), rows
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"browse: {args.sessions:,} sessions x {args.messages} message(s) vs 10, {args.rounds} rounds, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"  first listing (source.tree, cache warm): {med['big listing']:.2f} s   (10 sessions: "
          f"{med['small listing'] * 1000:.0f} ms)")
    print(f"  open after the listing: {med['big open'] * 1000:.0f} ms   (10 sessions: {med['small open'] * 1000:.0f} ms;"
          f" ratio {med['big open'] / med['small open']:.2f})")
    print(f"  the same in the open app (F5: tree, rows, first item): {med['big reload'] * 1000:.0f} ms   (10 sessions: "
          f"{med['small reload'] * 1000:.0f} ms)")
    print(f"  one page down: {med['big page'] * 1000:.1f} ms   (10 sessions: {med['small page'] * 1000:.1f} ms)")
    print(f"  memory: the listing's peak {med['big listing peak MiB']:.0f} MiB; the app's open adds a peak of "
          f"{med['big open peak MiB']:.1f} MiB")


if __name__ == "__main__":
    main()
