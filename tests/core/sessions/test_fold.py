"""A store's scan is a fold (``stores.Fold``): ``empty``, ``add`` and an associative ``merge``, so a store may fold
its sessions in any chunks and merge the chunks' results; and a home's JSON directory, which holds the REPL/TUI
store's files too, is read once for both stores.

The folds are the product's own (``session list``'s rows, ``session search``'s partial results, the secret scan's
findings, the usage report's records), over the real praisonai 4.7.19 gateway home (every store: json, sessions.db,
a project store, the REPL/TUI files, the old runs) and the praisonaiagents 1.7.17 home.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from praisonmem.core.io import cache as cache_module
from praisonmem.core.io import inputfile, parallel
from praisonmem.core.io.cache import Cache
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import listcache
from praisonmem.core.sessions import search as session_search
from praisonmem.core.sessions.listing import summary_rows
from praisonmem.core.sessions.sieve import sieve_for
from praisonmem.core.sessions.stores import Each, Scanned, fold_in
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.stores.secretscan import SessionFindings
from praisonmem.core.usage.report import UsageFold


def itself(item: Scanned) -> list[Scanned]:
    return [item]


def scanned(home: Path) -> list[Scanned]:
    """Every session of the home as its scan hands it over, in scan order."""
    return open_store(resolve(home, env={})).scan(Each(itself))


def search_fold(limit: int, query: str = "paris weather a") -> session_search.SearchFold:
    terms = query.split()
    return session_search.SearchFold(query, terms, None, limit, sieve_for(terms))


def view(fold: Any, acc: Any) -> Any:
    """What a caller takes from a fold's result (a search: its hits sorted and cut, the total, the rest)."""
    if isinstance(fold, session_search.SearchFold):
        hits = list(fold.hits(acc))
        total = acc.dropped + len(hits)
        session_search._order(hits)
        if fold.limit:
            del hits[fold.limit:]
        return hits, total, acc.unreadable, acc.opaque, acc.opaque_sessions
    if isinstance(fold, SessionFindings):
        return [(s.findings, None if s.unparsed is None else (s.unparsed.where, str(s.unparsed.error)))
                for s in acc]
    if isinstance(fold, UsageFold):
        return [vars(u) for u in acc.usage], acc.unreadable
    return [(row, str(ref)) for row, ref in acc]


def grouped(fold: Any, items: list[Scanned], rng: random.Random) -> Any:
    """``items`` cut into random runs, each folded on its own (some last first, as the JSON directory folds a
    chunk for a fold that asks), the runs' results merged in a random tree (left and right kept in order)."""
    cuts = sorted(rng.sample(range(1, len(items)), min(len(items) - 1, rng.randint(0, 6)))) if len(items) > 1 else []
    runs = [items[a:b] for a, b in zip([0, *cuts], [*cuts, len(items)])]
    parts = []
    for run in runs:
        if getattr(fold, "last_first", False) and rng.random() < 0.5:
            acc = fold.empty()
            for item in reversed(run):
                acc = fold.add_first(item, acc)
            parts.append(acc)
        else:
            parts.append(fold_in(fold, fold.empty(), run))
    while len(parts) > 1:
        at = rng.randrange(len(parts) - 1)
        parts[at:at + 2] = [fold.merge(parts[at], parts[at + 1])]
    return parts[0]


def tied_items() -> list[Scanned]:
    """Sessions whose hits tie (same score, same updated_at, same place), which only scan order orders, and
    ones with encrypted contents and unreadable files between them."""
    from praisonmem.core.errors import CorruptFile

    items = []
    for i in range(40):
        doc = {"session_id": f"t{i:02d}", "updated_at": "2026-01-0%d" % (1 + i % 3), "messages": [
            {"role": "user", "content": "paris weather"}, {"role": "user", "content": "paris"},
            {"role": "user", "content": "praisonai:enc:v1:opaque"}][: 1 + i % 3]}
        items.append(Scanned(f"/h/t{i:02d}.json", f"t{i:02d}", doc, None, ref=f"/h/t{i:02d}.json", store="json"))
        if i % 9 == 4:
            items.append(Scanned(f"/h/bad{i}.json", None, None, CorruptFile(f"/h/bad{i}.json", "not JSON"),
                                 ref=f"/h/bad{i}.json", store="json"))
    return items


FOLDS = [lambda: Each(summary_rows), lambda: SessionFindings("standard"), lambda: UsageFold(),
         lambda: search_fold(0), lambda: search_fold(1), lambda: search_fold(3), lambda: search_fold(20),
         lambda: search_fold(2, "paris"), lambda: search_fold(5, "e hello")]


@pytest.mark.parametrize("make", FOLDS, ids=["list", "secrets", "usage", "search-all", "search-1", "search-3",
                                             "search-20", "search-paris-2", "search-e-hello-5"])
def test_merging_partial_results_in_any_grouping_is_one_fold_in_order(make, gateway_home, fixture_home, monkeypatch):
    monkeypatch.setattr(session_search, "CUT_AT", 3)  # the search cuts every few hits, inside runs and on merging
    rng = random.Random(5)
    for items in (scanned(gateway_home.home), scanned(fixture_home), tied_items()):
        fold = make()
        assert view(fold, fold.empty()) == view(fold, fold_in(fold, fold.empty(), []))
        want = view(fold, fold_in(fold, fold.empty(), items))
        for _ in range(25):
            fold = make()
            assert view(fold, grouped(fold, items, rng)) == want
        # empty() is merge's identity, on either side
        left = fold.merge(fold.empty(), fold_in(fold, fold.empty(), items))
        assert view(fold, fold.merge(left, fold.empty())) == want
    assert len(scanned(gateway_home.home)) >= 8  # every store of the home gave sessions


def test_the_folds_see_every_store_and_the_search_finds_what_it_should(gateway_home):
    items = scanned(gateway_home.home)
    assert {item.store for item in items} == {"json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run"}
    fold = search_fold(0, "a")
    hits, total, *_ = view(fold, fold_in(fold, fold.empty(), items))
    assert total == len(hits) == 31 and {h[10] for h in hits} == {item.store for item in items}
    fold = search_fold(3, "a")
    few, total, *_ = view(fold, fold_in(fold, fold.empty(), items))
    assert total == 31 and few == hits[:3]


# ---------------------------------------------------------------- each file read once


@pytest.fixture
def opened(tmp_path, monkeypatch) -> Any:
    """The paths ``open_data`` opens (every read of a session file), from the worker processes too: each open is
    appended to a log file."""
    log = tmp_path / "opens.log"
    real = inputfile.open_data

    def logged(path: Any) -> Any:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, (os.fspath(path) + "\n").encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
        return real(path)

    monkeypatch.setattr(inputfile, "open_data", logged)

    def read() -> Counter[str]:
        found = Counter(log.read_text(encoding="utf-8").splitlines()) if log.exists() else Counter()
        log.unlink(missing_ok=True)
        return found

    return read


def session_files(home: Path) -> list[str]:
    sessions = home / "sessions"
    return sorted(str(p) for p in [*sessions.glob("*.json"), *sessions.glob("projects/*/*.json"),
                                   *sessions.glob("run_*/*.json*")])  # the old runs: metadata.json, events.jsonl


def both_kinds_home(gateway_home: Any) -> Path:
    """The gateway home with more JSON sessions beside its REPL/TUI files, one of them with malformed
    ``messages``, one whose keys a ``\\u`` escape spells, and an unreadable file."""
    sessions = gateway_home.home / "sessions"
    for i in range(30):
        (sessions / f"extra{i:02d}.json").write_text(json.dumps({"session_id": f"extra{i:02d}", "messages": [
            {"role": "user", "content": f"paris weather {i}"}]}), encoding="utf-8")
    tui = {"session_id": "tui-bad", "workspace": "/w", "current_model": "m", "messages": 3}
    (sessions / "tui-bad.json").write_text(json.dumps(tui), encoding="utf-8")
    escaped = json.dumps({"session_id": "tui-esc", "workspace": "/w", "current_model": "m",
                          "messages": [{"role": "user", "content": "paris"}]})
    (sessions / "tui-esc.json").write_text(escaped.replace('"workspace"', '"\\u0077orkspace"'), encoding="utf-8")
    (sessions / "broken.json").write_text('{"messages": [', encoding="utf-8")
    return gateway_home.home


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_a_home_scan_reads_each_session_file_exactly_once(gateway_home, opened, monkeypatch, pool):
    home = both_kinds_home(gateway_home)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
    paths = resolve(home, env={})
    want = Counter(session_files(home))
    assert sum("tui" in name or "db5b5fab" in name for name in want) >= 4  # REPL/TUI files among them
    opened()
    for fold in (Each(summary_rows), search_fold(5), search_fold(0, "zebra"), SessionFindings("standard"),
                 UsageFold()):
        open_store(paths).scan(fold)
        assert opened() == want, fold


def test_a_listing_reads_each_file_once_cold_and_only_the_unkept_ones_warm(gateway_home, opened, tmp_path,
                                                                          monkeypatch):
    home = both_kinds_home(gateway_home)
    monkeypatch.setattr(cache_module, "GRANULARITY_NS", -(10 ** 12))  # every file counts as settled: rows are kept
    paths = resolve(home, env={})
    memo = listcache.memo(Cache(tmp_path / "cache"))
    plain = open_store(paths).scan(Each(summary_rows))
    opened()
    cold = open_store(paths).scan(Each(summary_rows), memo=memo)
    assert opened() == Counter(session_files(home))
    warm = open_store(paths).scan(Each(summary_rows), memo=listcache.memo(Cache(tmp_path / "cache")))
    unkept = opened()
    assert set(unkept.values()) == {1}
    # the kept rows are the JSON stores' readable sessions; the REPL/TUI files and the unreadable ones are read
    names = {os.path.basename(p) for p in unkept}
    assert {"tui0001a.json", "tui-bad.json", "tui-esc.json", "broken.json"} <= names
    assert not any(name.startswith("extra") for name in names)
    rows = [[(row, str(ref)) for row, ref in found] for found in (plain, cold, warm)]
    assert rows[0] == rows[1] == rows[2]
    stores = {row["session_id"]: row["store"] for row, _ in rows[0]}
    assert stores["tui-esc"] == "unified" and stores["db5b5fab"] == "unified" and stores["extra00"] == "json"
    assert [row["file"] for row, _ in rows[0] if row["unreadable"]].count(str(home / "sessions" / "tui-bad.json")) == 1
