"""The FileMemory-compatible store against the library's vectors and oracles."""

from __future__ import annotations

import json
import shutil
import stat
from datetime import datetime
from pathlib import Path

import pytest

from praisonmem.core.memory import filememory
from praisonmem.core.errors import CorruptFile, UsageError
from praisonmem.core.memory.filememory import FileMemoryStore
from praisonmem.core.memory.search import search
from tests.conftest import PRAISONAI_FIXTURES

VECTORS = json.loads((PRAISONAI_FIXTURES / "vectors.json").read_text(encoding="utf-8"))
ORACLES = json.loads((PRAISONAI_FIXTURES / "expected/memory.json").read_text(encoding="utf-8"))


@pytest.fixture
def base(tmp_path) -> Path:
    dest = tmp_path / "memory"
    shutil.copytree(PRAISONAI_FIXTURES / "project/.praisonai/memory", dest)
    return dest


@pytest.mark.parametrize("case", VECTORS["episodic_dates"], ids=lambda c: repr(c["input"]))
def test_episodic_date_vectors(case):
    if "error" in case:
        with pytest.raises(UsageError) as info:
            filememory.normalise_date(case["input"])
        assert info.value.message == case["message"]
    else:
        assert filememory.normalise_date(case["input"]) == case["normalized"]


@pytest.mark.parametrize("case", VECTORS["file_memory_user_ids"], ids=lambda c: repr(c["input"]))
def test_user_id_vectors(case):
    if "error" in case:
        with pytest.raises(UsageError, match=case["message"]):
            filememory.sanitise_user_id(case["input"])
    else:
        assert filememory.sanitise_user_id(case["input"]) == case["dir_name"]


@pytest.mark.parametrize("user", ["alice", "bob"])
@pytest.mark.parametrize("query", ["dark mode", "mode dark editor", "developer", "bob note", "Rust"])
@pytest.mark.parametrize("cache", ["no cache", "cold cache", "warm cache"])
def test_search_equals_the_library_oracle(base, tmp_path, monkeypatch, user, query, cache):
    from praisonmem.core.io import cache as cachemod

    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)  # the copies are new: trust them at once
    store = FileMemoryStore(base, user, cache=None if cache == "no cache" else cachemod.Cache(tmp_path / "cache"))
    if cache == "warm cache":
        search(store, "anything", ["short_term", "long_term", "entity"], 10)
        assert len(list((tmp_path / "cache").rglob("*.bin"))) == 3
    expected = ORACLES[user]["search"][query]
    got = search(store, query, ["short_term", "long_term", "entity"], 10)
    assert [(r["type"], r["item"]["id"], r["score"]) for r in got] == \
        [(r["type"], r["item"]["id"], r["score"]) for r in expected]
    assert [r["item"] for r in got] == [r["item"] for r in expected]


def test_counts_match_the_library_stats(base):
    for user in ("alice", "bob"):
        stats = ORACLES[user]["stats"]
        counts = FileMemoryStore(base, user).counts()
        assert (counts["short_term"], counts["long_term"], counts["entities"], counts["summaries"]) == (
            stats["short_term_count"], stats["long_term_count"], stats["entity_count"], stats["summary_count"])
        assert counts["episodic_days"] == stats["episodic_days"]


def test_new_user_gets_the_library_defaults_and_byte_compatible_items(tmp_path):
    store = FileMemoryStore(tmp_path / "m", " carol ")
    item = store.add_short_term("User prefers dark mode", {"source": "chat"})
    user_dir = tmp_path / "m" / "carol"
    assert (user_dir / "episodic").is_dir()
    assert json.loads((user_dir / "config.json").read_text()) == filememory.DEFAULT_CONFIG
    assert list(item) == list(filememory.ITEM_KEYS)
    assert len(item["id"]) == 16 and all(c in "0123456789abcdef" for c in item["id"])
    assert isinstance(item["created_at"], float) and item["importance"] == 0.5 and item["access_count"] == 0
    raw = (user_dir / "short_term.json").read_bytes()
    assert raw == json.dumps([item], indent=2, ensure_ascii=False).encode()
    for name in ("short_term.json", "config.json"):
        assert stat.S_IMODE((user_dir / name).stat().st_mode) == 0o600
    assert sorted(p.name for p in user_dir.iterdir()) == [".praisonmem.lock", "config.json", "episodic",
                                                          "short_term.json"]


def test_config_is_read_not_rewritten(base):
    config = base / "bob" / "config.json"
    before = config.read_bytes()
    FileMemoryStore(base, "bob").add_long_term("x")
    assert config.read_bytes() == before


def test_auto_promotion_past_the_short_term_limit(tmp_path):
    store = FileMemoryStore(tmp_path, "bob")
    with store.writing():
        pass
    (tmp_path / "bob" / "config.json").write_text(json.dumps({**filememory.DEFAULT_CONFIG, "short_term_limit": 3}))
    ids = [store.add_short_term(f"note {i}", importance=0.9 if i == 0 else 0.5)["id"] for i in range(4)]
    short = [i["id"] for i in store.items("short_term")]
    long = [i["id"] for i in store.items("long_term")]
    assert short == ids[1:] and long == [ids[0]]


def test_promotion_takes_an_item_at_exactly_the_importance_threshold_and_none_below(tmp_path):
    """The library promotes ``importance >= importance_threshold``: an item of exactly 0.7 goes to long-term
    memory when the short-term limit is passed; one a hair below stays behind."""
    store = FileMemoryStore(tmp_path, "bob")
    with store.writing():
        pass
    (tmp_path / "bob" / "config.json").write_text(json.dumps({**filememory.DEFAULT_CONFIG, "short_term_limit": 2}))
    assert filememory.DEFAULT_CONFIG["importance_threshold"] == 0.7
    at = store.add_short_term("at the threshold", importance=0.7)["id"]
    store.add_short_term("just below", importance=0.6999999999)
    store.add_short_term("third", importance=0.5)  # past the limit: promotion runs
    assert [i["id"] for i in store.items("long_term")] == [at]


def test_long_term_overflow_keeps_the_most_important(tmp_path):
    store = FileMemoryStore(tmp_path, "u")
    with store.writing():
        pass
    (tmp_path / "u" / "config.json").write_text(json.dumps({**filememory.DEFAULT_CONFIG, "long_term_limit": 2}))
    store.add_long_term("low", importance=0.1)
    store.add_long_term("high", importance=0.9)
    store.add_long_term("mid", importance=0.5)
    assert [i["content"] for i in store.items("long_term")] == ["high", "mid"]


def test_entities_merge_by_name_any_case(base):
    store = FileMemoryStore(base, "alice")
    john = next(e for e in store.entities().values() if e["name"] == "John")
    merged = store.add_entity("JOHN", "person", {"city": "Lisbon"}, [{"type": "knows", "target": "Alice"}])
    assert merged["id"] == john["id"] and merged["attributes"]["city"] == "Lisbon"
    assert merged["attributes"]["role"] == "developer" and len(merged["relationships"]) == 2
    assert store.add_entity("John", "place")["id"] != john["id"]


def test_episodic_add_normalises_dates_and_today_is_local(tmp_path):
    store = FileMemoryStore(tmp_path, "u")
    day, item = store.add_episodic("trip", "2026-3-5")
    assert day == "2026-03-05" and (tmp_path / "u/episodic/2026-03-05.json").exists()
    today, _ = store.add_episodic("now")
    assert today == datetime.now().strftime("%Y-%m-%d")
    with pytest.raises(UsageError, match="date must be YYYY-MM-DD, got '2026-02-30'"):
        store.add_episodic("x", "2026-02-30")


def test_delete_order_short_long_entity_episodic(base):
    store = FileMemoryStore(base, "bob")
    promoted = "453800120a66fd16"  # in both tiers: short-term goes first
    assert store.delete(promoted)["type"] == "short_term"
    assert store.delete(promoted)["type"] == "long_term"
    assert store.delete("bob")["type"] == "entity"  # by name, any case
    assert store.delete("nope") is None


def test_delete_episodic_scans_30_local_days_without_a_date(tmp_path):
    store = FileMemoryStore(tmp_path, "u")
    _, old = store.add_episodic("old", "2020-01-01")
    _, recent = store.add_episodic("recent")
    assert store.delete_episodic(old["id"]) is None
    assert store.delete_episodic(old["id"], "2020-1-1")["date"] == "2020-01-01"
    assert store.delete_episodic(recent["id"])["type"] == "episodic"
    assert json.loads((tmp_path / "u/episodic/2020-01-01.json").read_text()) == []


def test_reset_all_keeps_config_sessions_and_checkpoints(base):
    store = FileMemoryStore(base, "alice")
    plan = store.reset("all")
    assert plan == {"short_term": 3, "long_term": 3, "entities": 2, "summaries": 1, "episodic": 3,
                    "episodic_files": 3}
    user = base / "alice"
    assert json.loads((user / "short_term.json").read_text()) == []
    assert json.loads((user / "entities.json").read_text()) == {}
    assert list((user / "episodic").glob("*.json")) == []
    assert (user / "config.json").exists() and (user / "sessions/weekly-review.json").exists()
    assert (user / "checkpoints/before-cleanup.json").exists()


def test_reset_long_leaves_short_term(base):
    store = FileMemoryStore(base, "alice")
    assert store.reset("long") == {"long_term": 3}
    assert len(store.items("short_term")) == 3 and store.items("long_term") == []


@pytest.mark.parametrize("content", [b"[{", b"{}", b'[{"id": "a", "content": 1}]', b"\xff",
                                     b'[{"id": "a", "content": "x", "importance": "high"}]'])
def test_a_corrupt_tier_is_refused_and_never_overwritten(base, content):
    target = base / "alice" / "short_term.json"
    target.write_bytes(content)
    store = FileMemoryStore(base, "alice")
    for action in (lambda: store.add_short_term("x"), lambda: search(store, "x"), lambda: store.reset("short"),
                   lambda: store.delete("x")):
        with pytest.raises(CorruptFile):
            action()
    assert target.read_bytes() == content


def test_reading_creates_nothing(tmp_path):
    store = FileMemoryStore(tmp_path / "m", "ghost")
    assert search(store, "x") == [] and store.counts()["short_term"] == 0
    assert store.delete("x") is None
    assert not (tmp_path / "m").exists()


def test_users_lists_store_dirs(base):
    assert filememory.users(base) == ["alice", "bob"]
    assert filememory.users(base / "nope") == []
