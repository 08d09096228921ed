"""The fork pool returns exactly what the serial path returns, in order."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.io import parallel
from praisonmem.core.sessions import search as session_search
from praisonmem.core.sessions import listing as sessions
from praisonmem.core.paths import resolve


def double(chunk: list[int]) -> list[int]:
    return [2 * x for x in chunk]


@pytest.fixture
def forced_pool(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setattr(parallel, "workers_for", lambda count: 2)


def test_map_chunks_keeps_order_and_reports_progress(forced_pool):
    seen = []
    assert parallel.map_chunks(double, list(range(1000)), progress=lambda d, t: seen.append((d, t))) == [
        2 * x for x in range(1000)]
    assert seen[-1] == (1000, 1000) and len(seen) > 1


def test_small_inputs_stay_in_process():
    assert parallel.workers_for(parallel.MIN_ITEMS - 1) == 1


def test_pool_and_serial_list_and_search_agree(fixture_home, monkeypatch):
    sdir = fixture_home / "sessions"
    for i in range(40):
        doc = {"session_id": f"gen/{i}", "messages": [{"role": "user", "content": f"hotel number {i}"}],
               "updated_at": f"2026-01-01T00:00:{i:02}+00:00"}
        (sdir / f"gen_{i}.json").write_text(json.dumps(doc), encoding="utf-8")
    (sdir / "bad.json").write_bytes(b"{")
    paths = resolve(fixture_home, env={})

    def run():
        listed = sessions.list_sessions(paths, workspace=lambda: "dir:/x", limit=0)
        found = session_search.search(paths, "hotel", limit=0)
        return listed.rows, found.hits, found.unreadable

    serial = run()
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
    assert run() == serial
    assert len(serial[0]) == 53 and serial[2] and serial[1]
