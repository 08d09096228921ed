#!/usr/bin/env python3
"""praisonmem check over the 10k home vs the raw-parse floor.

On the 10k home (10,000 sessions x 20 messages, with their lock sidecars), in
interleaved rounds:

* praisonmem: ``check HOME --json``;
* floor serial / floor pool: the raw-parse floor (see README) over HOME/sessions;
  the floor is the faster of the two.

Goal (README.md, The rows): <= 1.5x the floor. Checked: every run reports all the session
files checked and no finding (the generated home is clean), and prints the same bytes.
"""

from __future__ import annotations

import json
import sys

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7


def body(ctx: Context) -> list[Row]:
    size = ctx.sessions
    home = _data.session_home(ctx.data_dir, size)
    _data.tidy_home(home)
    sessions = str(home / "sessions")
    print(f"check, {size:,} sessions, {_bench.load_line()}", file=sys.stderr)

    expected = ctx.pm_run("check", str(home), "--json").stdout
    report = json.loads(expected)
    assert report["ok"] is True and report["files_checked"] == size and not report["findings"], report

    def praisonmem() -> dict[str, Sample]:
        result = ctx.pm_run("check", str(home), "--json")
        assert result.stdout == expected, "check output changed between runs"
        return {"praisonmem": result.sample}

    def floor(mode: str) -> _bench.Case:
        def case() -> dict[str, Sample]:
            result = ctx.py_run(_bench.FLOOR, sessions, mode)
            assert int(result.stdout) == size
            return {f"floor {mode}": result.sample}
        return case

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, floor("serial"), floor("pool")], ctx.rounds)
    best = _bench.floor_label(samples)
    details = _bench.details(samples, load_before, sessions=size, floor_used=best, output_sha256=ctx.digest(expected))
    return [_bench.ratio_row(f"check, {size:,}-session home (vs floor)", samples, "praisonmem", "floor", 1.50,
                             checked=f"{size:,} files checked, no finding", details=details)]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
