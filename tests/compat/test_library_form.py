"""documents.library_form is the real SessionData.from_dict(doc).to_dict(), on every fixture and on the odd
shapes the library tolerates (what sessions.db's one-time import writes, and what pairing compares)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from praisonmem.core.sessions.documents import library_form
from tests.conftest import FIXTURES

library = pytest.importorskip("praisonaiagents.session.store")  # the compat extra; collection works without it

SESSION_FILES = sorted(p for p in FIXTURES.rglob("*.json") if p.parent.name in ("sessions", "8ccfb8a2")
                       and isinstance(json.loads(p.read_text(encoding="utf-8")), dict))
NOW = 1796000000.25

ODD = {
    "non-object messages before the checkpoint": {
        "session_id": "x", "messages": [None, "text", {"role": "user", "content": "a", "timestamp": 1.0}, 3,
                                        {"role": "assistant", "content": "b", "timestamp": 2.0}],
        "last_compaction": {"summary": "s", "message_index": 4}, "created_at": "c", "updated_at": "u"},
    "mirrors only at the top": {"session_id": "x", "messages": [], "model": "gpt", "cost": 0.5, "llm": None,
                                "created_at": "c", "updated_at": "u"},
    "metadata wins over a mirror": {"session_id": "x", "messages": [], "model": "top", "metadata": {"model": "m"},
                                    "created_at": "c", "updated_at": "u"},
    "missing everything": {},
    "messages missing fields": {"messages": [{}, {"role": "tool", "tool_call_id": "c1", "tool_calls": []},
                                             {"metadata": None, "tool_calls": [{"id": "1"}]}]},
    "null metadata and runtime_state": {"session_id": "x", "messages": [], "metadata": None, "runtime_state": None,
                                        "archived_messages": None, "created_at": "c", "updated_at": "u"},
    "unknown keys": {"session_id": "x", "messages": [], "workspace": "/w", "snapshots": [1], "created_at": "c",
                     "updated_at": "u", "total_input_tokens": 3},
    "messages as a string": {"session_id": "x", "messages": "abc", "created_at": "c", "updated_at": "u"},
}


def library_round_trip(doc: dict, monkeypatch) -> dict:
    from datetime import datetime, timezone

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.fromtimestamp(NOW, tz or timezone.utc)

    monkeypatch.setattr(library.time, "time", lambda: NOW)
    monkeypatch.setattr(library, "datetime", Frozen)
    return library.SessionData.from_dict(json.loads(json.dumps(doc))).to_dict()


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_session_normalises_as_the_library_does(path, monkeypatch):
    doc = json.loads(path.read_text(encoding="utf-8"))
    expected = library_round_trip(doc, monkeypatch)
    got = library_form(doc, now=NOW)
    assert got == expected
    assert json.dumps(got, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)  # the key order too


@pytest.mark.parametrize("name", ODD)
def test_the_odd_shapes_the_library_tolerates_normalise_the_same(name, monkeypatch):
    doc = ODD[name]
    expected = library_round_trip(doc, monkeypatch)
    assert json.dumps(library_form(doc, now=NOW), ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


@pytest.mark.parametrize("doc", [{"messages": 3}, {"messages": [], "metadata": 5},
                                 {"messages": [], "last_compaction": "text"}])
def test_what_the_library_cannot_load_is_refused(doc, monkeypatch):
    with pytest.raises(Exception):
        library_round_trip(doc, monkeypatch)
    with pytest.raises(ValueError, match="the library cannot load it"):
        library_form(doc, now=NOW)


def test_there_are_fixture_files_of_every_kind():
    names = {p.name for p in SESSION_FILES}
    assert {"tui0001a.json", "enc-1.json", "compacted-demo.json", "proj-sess-1.json"} <= names
    assert any("praisonai-eras" in str(p) for p in SESSION_FILES) and len(SESSION_FILES) > 20
    assert all(isinstance(p, Path) for p in SESSION_FILES)
