"""AutoMemory pattern extraction and what --store would write."""

from __future__ import annotations

import json

from praisonmem.core.memory import automemory
from praisonmem.core.memory.filememory import FileMemoryStore
from tests.conftest import PRAISONAI_FIXTURES

VECTORS = json.loads((PRAISONAI_FIXTURES / "vectors.json").read_text(encoding="utf-8"))["auto_memory"]
SENTENCE = "My name is Bob and I prefer Rust for systems work."


def test_extraction_matches_the_library_vector():
    assert automemory.extract(SENTENCE) == VECTORS["preview_store_false"]


def test_nothing_without_a_keyword():
    assert automemory.extract("The weather is nice; Name: Zed") == []


def test_store_writes_what_the_library_writes_then_skips_it(tmp_path):
    store = FileMemoryStore(tmp_path, "bob")
    writes = automemory.planned_writes(store, automemory.extract(SENTENCE))
    assert [(w.kind, w.content, w.importance, w.skipped) for w in writes] == [
        ("entity", "Bob", 0.95, False), ("long_term", "Rust for systems work", 0.7, False),
        ("long_term", "Rust", 0.7, False)]
    automemory.store_writes(store, writes)
    [entity] = store.entities().values()
    assert (entity["name"], entity["entity_type"], entity["attributes"]) == ("Bob", "person", {"relationship": "user"})
    assert [(i["content"], i["importance"]) for i in store.items("long_term")] == [
        ("Rust for systems work", 0.7), ("Rust", 0.7)]
    again = automemory.planned_writes(store, automemory.extract(SENTENCE))
    assert all(w.skipped for w in again)


def test_role_and_location_are_prefixed():
    found = automemory.extract("I am a data engineer. I live in Lisbon")
    kinds = {m["type"]: m["content"] for m in found}
    assert kinds["role"] == "data engineer" and kinds["location"] == "Lisbon"
    writes = automemory.planned_writes(FileMemoryStore(PRAISONAI_FIXTURES / "nowhere", "x"), found)
    assert "User's role: data engineer" in [w.content for w in writes]
    assert "User's location: Lisbon" in [w.content for w in writes]
