"""``session search`` keeps only what it can show: each session's best ``--limit`` hits
cross from the worker, not all of them, with the same results and total as the unbounded search."""

from __future__ import annotations

import json
import random

from praisonmem.core.paths import resolve
from praisonmem.core.sessions import search as session_search
from praisonmem.core.sessions.stores import Scanned


def test_a_limited_search_is_the_head_of_the_full_one(tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(3)
    words = "lisbon paris hotel weather agent".split()
    for i in range(1200):  # over the fork pool's threshold: the workers truncate too
        doc = {"session_id": f"s{i:04}", "updated_at": f"2026-11-{1 + i % 28:02}T00:00:00+00:00",
               "archived_messages": [{"role": "user", "content": " ".join(rng.choice(words) for _ in range(6))}],
               "messages": [{"role": "user" if j % 2 else "assistant",
                             "content": " ".join(rng.choice(words) for _ in range(6))} for j in range(8)]}
        (sessions / f"s{i:04}.json").write_text(json.dumps(doc, indent=2))
    paths = resolve(tmp_path / "h")
    full = session_search.search(paths, "lisbon paris", limit=0)
    assert full.total == len(full.hits) > 2000
    for limit in (1, 7, 20, 500):
        limited = session_search.search(paths, "lisbon paris", limit=limit)
        assert (limited.hits, limited.total) == (full.hits[:limit], full.total)


def test_the_workers_cut_keeps_the_best_hits_and_counts_the_rest():
    """What crosses from a worker is bounded by --limit: the best hits (search's order) and one count of the others."""
    doc = {"session_id": "x", "messages": [{"role": "user", "content": c} for c in
                                           ("paris", "lisbon paris", "nothing", "paris lisbon", "paris")]}
    item = Scanned(where="x.json", session_id="x", doc=doc, error=None, store="json")
    every = session_search.session_hits(item, needle="lisbon paris", terms=["lisbon", "paris"])
    assert len(every.hits) == 4 and every.dropped == 0  # "nothing" has no hit
    fold = session_search.SearchFold("lisbon paris", ["lisbon", "paris"], limit=2)
    kept = fold.empty()
    fold._cut(fold.add(kept, item))
    assert kept.dropped == 2 and [hit[3] for hit in kept.hits] == [1, 3]  # the two whole-query hits, in place order
