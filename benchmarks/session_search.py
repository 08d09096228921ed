#!/usr/bin/env python3
"""praisonmem session search vs DefaultSessionStore.search, time and peak RSS.

On the 10k home (10,000 sessions x 20 messages), for "paris weather" (186,510
message hits in 10,000 sessions) and "zebra" (no hits), in interleaved rounds:

* praisonmem: ``session search QUERY --json`` (default --limit 20), peak RSS of the
  process tree (largest single process, fork-pool workers included);
* library: a process doing import + ``DefaultSessionStore(session_dir=...).search(QUERY, limit=20)``;
* library call: the ``search`` call alone, in this process.

Goals (README.md, The rows): >= 2.5x faster than the library process (ratio <= 0.40) and peak
RSS <= 40 MiB, for both queries.

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
import sys
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7
QUERIES = ("paris weather", "zebra")
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

    def praisonmem() -> dict[str, Sample]:
        result = ctx.pm_run("session", "search", query, "--json", home=home)
        assert result.stdout == expected, "session search output changed between runs"
        return {"praisonmem": result.sample}

    def library() -> dict[str, Sample]:
        result = ctx.py_run(LIBRARY, sessions, query, str(LIMIT))
        assert len(json.loads(result.stdout)) == min(LIMIT, hit_sessions)
        return {"library": result.sample}

    def library_call() -> dict[str, Sample]:
        sample, found = _bench.in_process(lambda: DefaultSessionStore(session_dir=sessions).search(query, limit=LIMIT))
        assert len(found) == min(LIMIT, hit_sessions)
        return {"library call": sample}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, library, library_call], ctx.rounds)
    checked = f"{hits:,} hits in {hit_sessions:,} sessions: sessions, anchors, scores, when = library"
    details = _bench.details(samples, load_before, query=query, hits=hits, hit_sessions=hit_sessions,
                             output_sha256=ctx.digest(expected))
    label = f'session search "{query}"'
    return [_bench.ratio_row(f"{label} ({hits:,} hits)", samples, "praisonmem", "library", 0.40,
                             checked=checked, details=details),
            _bench.rss_row(f"{label}, peak RSS", samples, "praisonmem", "library", 40)]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
