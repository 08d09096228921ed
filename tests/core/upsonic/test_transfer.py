"""Upsonic export and import, and PraisonAI sessions converted to rows and back."""

from __future__ import annotations

import json
import sqlite3

import pytest

from praisonmem.core import upsonic as upsonic_io
from praisonmem.core.errors import TargetExists, UsageError
from praisonmem.core.upsonic import Store, decode, from_praisonai, to_praisonai
from tests.conftest import FIXTURES, PRAISONAI_FIXTURES


def test_export_then_import_into_a_new_file_reproduces_the_rows(db, tmp_path):
    payload = upsonic_io.export(Store(db))
    assert sorted(u["user_id"] for u in payload["users"]) == ["user_123", "user_456"]
    assert all(isinstance(s["created_at"], int) for s in payload["sessions"])
    out = tmp_path / "export.json"
    out.write_text(json.dumps(payload))
    users, sessions = upsonic_io.read_export(str(out))
    target = Store(tmp_path / "new.db")
    report = upsonic_io.run_import(target, users, sessions)
    assert {c.action for c in report.changes} == {"inserted"}
    original = sqlite3.connect(db)
    copy = sqlite3.connect(tmp_path / "new.db")
    for table in ("upsonic_sessions", "upsonic_user_memories"):
        query = f"SELECT * FROM {table} ORDER BY 1"
        assert copy.execute(query).fetchall() == original.execute(query).fetchall(), table
    ddl = "SELECT name, sql FROM sqlite_master ORDER BY name"
    assert copy.execute(ddl).fetchall() == original.execute(ddl).fetchall()


def test_import_validates_everything_first(db, tmp_path):
    payload = upsonic_io.export(Store(db))
    payload["sessions"][2]["session_type"] = "robot"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(payload))
    with pytest.raises(UsageError, match="session 2 \\('session_004'\\): session_type must be one of"):
        upsonic_io.read_export(str(bad))
    (tmp_path / "other.json").write_text('{"version": 1, "sessions": []}')
    with pytest.raises(UsageError, match="not a praisonmem Upsonic export"):
        upsonic_io.read_export(str(tmp_path / "other.json"))


def test_convert_praisonai_to_upsonic_and_back_keeps_texts_and_tool_exchanges(tmp_path):
    original = json.loads((PRAISONAI_FIXTURES / "home/sessions/compacted-demo.json").read_text())
    row = from_praisonai(original, now=1_800_000_000)
    store = Store(tmp_path / "u.db")
    upsonic_io.write_converted(store, [row])
    back = to_praisonai(store.session("compacted-demo"))

    def exchange(doc):
        out = []
        for m in doc.get("archived_messages", []) + doc["messages"]:
            calls = [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls", [])]
            out.append((m["role"], m["content"], calls, m.get("tool_call_id")))
        return out

    assert exchange(back) == exchange(original)
    assert back["metadata"]["upsonic"]["summary"] == original["last_compaction"]["summary"]
    with pytest.raises(TargetExists):
        upsonic_io.write_converted(store, [row])
    upsonic_io.write_converted(store, [row], replace=True)


def test_converted_rows_are_encoded_as_the_library_writes_them(tmp_path):
    doc = json.loads((PRAISONAI_FIXTURES / "home/sessions/history_ec9d38c8.json").read_text())
    store = Store(tmp_path / "u.db")
    upsonic_io.write_converted(store, [from_praisonai(doc, now=1_800_000_000)])
    raw = sqlite3.connect(tmp_path / "u.db").execute(
        "SELECT messages, metadata, usage, team_data, runs FROM upsonic_sessions").fetchone()
    assert raw[0].startswith('"[{\\"parts\\": [{\\"content\\": \\"What is the weather')
    assert isinstance(json.loads(raw[1]), str)  # double-encoded
    assert (raw[2], raw[3], raw[4]) == ("null", None, '"{}"')
    assert decode(raw[0])[1]["parts"][0]["part_kind"] == "tool-call"


def test_a_retry_prompt_without_a_tool_call_id_becomes_a_user_turn():
    """pydantic-ai sends a retry prompt that answers no tool call (output validation) as a user message; a
    ``tool`` message without a ``tool_call_id`` is one no chat API accepts. One that answers a call stays a tool
    result of that call."""
    row = {"session_id": "r", "messages": [{"kind": "request", "timestamp": "2026-11-30T14:49:49Z", "parts": [
        {"part_kind": "retry-prompt", "content": "answer in JSON", "tool_name": None, "tool_call_id": None,
         "timestamp": "2026-11-30T14:49:49Z"},
        {"part_kind": "retry-prompt", "content": [{"msg": "bad city"}], "tool_name": "weather",
         "tool_call_id": "call_1", "timestamp": "2026-11-30T14:49:50Z"}]}]}
    messages = to_praisonai(row)["messages"]
    assert messages == [
        {"role": "user", "content": "answer in JSON", "timestamp": 1796050189.0,
         "metadata": {"upsonic_part_kind": "retry-prompt"}},
        {"role": "tool", "content": '[{"msg": "bad city"}]', "timestamp": 1796050190.0,
         "metadata": {"upsonic_part_kind": "retry-prompt"}, "tool_call_id": "call_1"}]
