#!/usr/bin/env python3
"""praisonmem session search vs DefaultSessionStore.search, time and peak RSS.

On the 10k home (10,000 sessions x 20 messages), for "paris weather" (186,510
message hits in 10,000 sessions) and "zebra" (no hits), in interleaved rounds:

* praisonmem: ``session search QUERY --json`` (default --limit 20) with its index warm (kept in
  praisonmem's cache by the warm-up round), peak RSS of the process tree (largest single process,
  fork-pool workers included);
* praisonmem cold: the same with the cache emptied first (every file read, the index built);
* praisonmem --no-cache: the same parsing every file, as before the index (the cold row's 1.2x is
  against this, and against main's code with benchmarks/versus.py);
* library: a process doing import + ``DefaultSessionStore(session_dir=...).search(QUERY, limit=20)``;
* library call: the ``search`` call alone, in this process.

Goals (README.md, The rows): warm, ratio <= 0.10 for "zebra" and <= 0.25 for "paris weather" against
the library process; cold <= 1.2x --no-cache; peak RSS <= 40 MiB; the index at most half the size
of the session files it describes.

Checked, once per query, with ``--limit 0`` and the library's ``limit=10**9``: the
two rank differently (praisonmem ranks messages, the library sessions), so what is
compared is, per session hit: the set of sessions with a hit; the library's anchor
(first best-scoring message, archived turns first) = praisonmem's first hit in that
session; the library's score = the sum of praisonmem's message scores there (x 0.25
where the library demotes an automated session); the library's ``when`` =
praisonmem's ``updated_at``. And every timed praisonmem run prints the same bytes,
the first 20 hits of the ``--limit 0`` list.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
QUERIES = ("paris weather", "zebra")  # benchmarks/versus.py has their cold rows against another commit
LIMIT = 20

LIBRARY = """
import json, sys
from praisonaiagents.session.store import DefaultSessionStore
hits = DefaultSessionStore(session_dir=sys.argv[1]).search(sys.argv[2], limit=int(sys.argv[3]))
print(json.dumps([[h.session_id, h.score, h.anchor_index, h.when] for h in hits]))
"""


def body(ctx: Context) -> list[Row]:
    size = ctx.sessions
    home = _data.session_home(ctx.data_dir, size)
    _data.tidy_home(home)
    rows: list[Row] = []
    for query in QUERIES:
        rows += measure(ctx, home, query)
    return rows


def verify(ctx: Context, home: Path, query: str) -> tuple[bytes, int, int]:
    """Compare every hit with the library's (see the module doc); the first LIMIT hits as JSON bytes."""
    from praisonaiagents.session.store import DefaultSessionStore as Store

    sessions = str(home / "sessions")
    ours = json.loads(ctx.pm_run("session", "search", query, "--json", "--limit", "0", home=home).stdout)
    theirs = json.loads(ctx.py_run(LIBRARY, sessions, query, str(10**9)).stdout)
    by_session: dict[str, list[dict]] = {}
    for hit in ours:
        by_session.setdefault(hit["session_id"], []).append(hit)
    assert set(by_session) == {h[0] for h in theirs}, f"{query!r}: the sessions hit differ"
    for session_id, score, anchor, when in theirs:
        hits = by_session[session_id]
        doc = json.loads(Path(hits[0]["file"]).read_text(encoding="utf-8"))
        archived = len(doc.get("archived_messages") or [])
        first = hits[0]
        assert anchor == (first["index"] if first["archived"] else archived + first["index"]), (query, session_id)
        demote = Store.AUTOMATED_DEMOTION if Store._is_automated_session(doc, Store._searchable_messages(doc)) else 1
        assert math.isclose(score, sum(h["score"] for h in hits) * demote), (query, session_id, score)
        assert when == first["updated_at"], (query, session_id)
    top = json.dumps(ours[:LIMIT], ensure_ascii=False)
    return top.encode(), len(ours), len(by_session)


def measure(ctx: Context, home: Path, query: str) -> list[Row]:
    from praisonaiagents.session.store import DefaultSessionStore

    sessions = str(home / "sessions")
    print(f"session search {query!r}, {_bench.load_line()}", file=sys.stderr)
    top, hits, hit_sessions = verify(ctx, home, query)
    expected = ctx.pm_run("session", "search", query, "--json", home=home).stdout
    assert json.loads(expected) == json.loads(top), f"{query!r}: --limit 20 is not the first 20 of --limit 0"

    cache = Path(ctx.env["PRAISONMEM_CACHE_DIR"])

    def praisonmem() -> dict[str, Sample]:
        result = ctx.pm_run("session", "search", query, "--json", home=home)
        assert result.stdout == expected, "session search output changed between runs"
        return {"praisonmem": result.sample}

    def cold() -> dict[str, Sample]:
        shutil.rmtree(cache, ignore_errors=True)
        result = ctx.pm_run("session", "search", query, "--json", home=home)
        assert result.stdout == expected, "session search output changed between runs"
        return {"praisonmem cold": result.sample}

    def uncached() -> dict[str, Sample]:
        result = ctx.pm_run("--no-cache", "session", "search", query, "--json", home=home)
        assert result.stdout == expected, "session search output changed between runs"
        return {"praisonmem --no-cache": result.sample}

    def library() -> dict[str, Sample]:
        result = ctx.py_run(LIBRARY, sessions, query, str(LIMIT))
        assert len(json.loads(result.stdout)) == min(LIMIT, hit_sessions)
        return {"library": result.sample}

    def library_call() -> dict[str, Sample]:
        sample, found = _bench.in_process(lambda: DefaultSessionStore(session_dir=sessions).search(query, limit=LIMIT))
        assert len(found) == min(LIMIT, hit_sessions)
        return {"library call": sample}

    load_before = _bench.load_line()
    # cold last in each round: it empties the cache, which the warm-up round and the cold run refill
    samples = _bench.interleave([praisonmem, library, library_call, uncached, cold], ctx.rounds)
    praisonmem()  # the index kept again, for its size
    index = sum(p.stat().st_size for p in (cache / "session-search").iterdir())
    sessions_size = sum(p.stat().st_size for p in _data.session_files(home))
    checked = f"{hits:,} hits in {hit_sessions:,} sessions: sessions, anchors, scores, when = library"
    details = _bench.details(samples, load_before, query=query, hits=hits, hit_sessions=hit_sessions,
                             output_sha256=ctx.digest(expected), index_bytes=index, sessions_bytes=sessions_size)
    label = f'session search "{query}"'
    warm_goal = 0.10 if query == "zebra" else 0.25
    return [_bench.ratio_row(f"{label} ({hits:,} hits), warm", samples, "praisonmem", "library", warm_goal,
                             checked=checked, details=details),
            _bench.ratio_row(f"{label}, cold vs --no-cache", samples, "praisonmem cold", "praisonmem --no-cache",
                             1.2, checked="the same bytes"),
            _bench.ratio_row(f"{label}, --no-cache", samples, "praisonmem --no-cache", "library", 0.40),
            _bench.rss_row(f"{label}, peak RSS", samples, "praisonmem", "library", 40),
            _bench.Row(f"{label}, index size / sessions size", "index entry bytes", "session file bytes",
                       index, sessions_size, "<= 0.50", 0.50, unit="bytes", checked="")]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
