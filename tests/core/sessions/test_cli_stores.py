"""cli_stores(paths): the praisonai CLI's stores, each a whole SessionStore on its own (the home composite only
holds them, and tests/core/sessions/test_stores.py checks their interface)."""

from __future__ import annotations

import os

import pytest

from praisonmem.core.paths import resolve
from praisonmem.core.sessions.stores import Each
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.listing import summary_rows
from praisonmem.core.sessions.stores.home import cli_stores
from praisonmem.core.sessions.stores.unified import UnifiedStore


def test_the_gateway_home_has_a_project_store_the_unified_files_and_the_runs(gateway_home):
    found = cli_stores(resolve(gateway_home.home, env={}))
    assert [s.label for s in found] == ["project:8ccfb8a2", "unified", "legacy-run"]
    assert found[0].directory == gateway_home.project_store


def test_on_its_own_the_unified_store_scans_its_files(gateway_home):
    unified = next(s for s in cli_stores(resolve(gateway_home.home, env={})) if isinstance(s, UnifiedStore))
    rows = unified.scan(Each(summary_rows))
    assert sorted((r["session_id"], r["store"], r["message_count"], str(ref)) for r, ref in rows) == [
        ("db5b5fab", "unified", 1, str(gateway_home.sessions / "db5b5fab.json")),
        ("tui0001a", "unified", 2, str(gateway_home.sessions / "tui0001a.json")),
        ("tui0002b", "unified", 2, str(gateway_home.sessions / "tui0002b.json"))]
    assert [os.path.basename(p) for p in unified.refs()] == ["db5b5fab.json", "tui0001a.json", "tui0002b.json"]


def test_in_the_home_each_store_lists_its_own_and_the_json_store_leaves_the_unified_files(gateway_home):
    home = open_store(resolve(gateway_home.home, env={}))
    assert list(home.stores) == ["json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run"]
    found = sorted((ref.store, r["session_id"]) for r, ref in home.scan(Each(summary_rows)) if ref.store != "sessions.db")
    assert found == [("json", "bot_slack_7"), ("json", "bot_telegram_42"), ("json", "enc-1"), ("json", "gw-legacy"),
                     ("legacy-run", "run_20261128_110000_ec9910"), ("project:8ccfb8a2", "proj-sess-1"),
                     ("unified", "db5b5fab"), ("unified", "tui0001a"), ("unified", "tui0002b")]
    assert "tui0001a.json" not in [os.path.basename(p) for p in home.stores["json"].refs()]
    assert not home.stores["json"].exists(str(gateway_home.sessions / "tui0001a.json"))


def test_the_home_scan_reads_each_unified_file_once_and_in_the_unified_stores_place(gateway_home, monkeypatch):
    from praisonmem.core.sessions.stores import unified

    paths = resolve(gateway_home.home, env={})
    home = open_store(paths)
    alone = [(label, r["session_id"], str(ref)) for label, store in home.stores.items()
             for r, ref in store.scan(Each(summary_rows))]  # each store on its own, in member order
    monkeypatch.setattr(unified, "read_unified", lambda path: pytest.fail(f"{path} read again"))
    shared = [(ref.store, r["session_id"], str(ref.ref)) for r, ref in open_store(paths).scan(Each(summary_rows))]
    assert shared == alone  # the same rows, in member order: json, sessions.db, project:<id>, unified, legacy-run
    assert [label for label, _, _ in shared] == sorted(
        (label for label, _, _ in shared),
        key=["json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run"].index)
    assert [sid for label, sid, _ in shared if label == "unified"] == ["db5b5fab", "tui0001a", "tui0002b"]
    # narrowed to the unified store, it reads its files itself
    monkeypatch.undo()
    narrowed = open_store(paths, "unified").scan(Each(summary_rows))
    assert [r["session_id"] for r, _ in narrowed] == ["db5b5fab", "tui0001a", "tui0002b"]
