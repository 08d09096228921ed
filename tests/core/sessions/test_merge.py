"""The merge rule for two histories of one agent (praisonmem.core.sessions.merge)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from praisonmem.core.errors import CorruptFile
from praisonmem.core.sessions.merge import merge_documents
from tests.conftest import FIXTURES, PRAISONAI_FIXTURES

WHERE = Path("target.json")


def msg(content: str, stamp: float, role: str = "user") -> dict:
    return {"role": role, "content": content, "timestamp": stamp, "metadata": {}}


def summary(text: str, count: int, stamp: float) -> dict:
    return {"role": "system", "content": f"[Session Summary]\n{text}", "timestamp": stamp,
            "metadata": {"compaction": True, "compacted_count": count}}


def compacted(tag: str, start: float, archived: int, active: int) -> dict:
    """A document shaped like the library's compaction leaves it: [summary, *recent], the rest archived."""
    turns = [msg(f"{tag} {i}", start + i, "user" if i % 2 == 0 else "assistant") for i in range(archived + active)]
    return {"session_id": tag, "messages": [summary(f"{tag} summary", archived, start + archived + active),
                                            *turns[archived:]],
            "created_at": "2026-01-01T00:00:00+00:00", "metadata": {"model": f"{tag}-model"},
            "archived_messages": turns[:archived]}


def contents(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages]


def test_two_compacted_sides_keep_one_summary_at_the_head_and_archive_what_is_older():
    legacy, ws = compacted("legacy", 100.0, 5, 4), compacted("ws", 200.0, 3, 4)
    merged = merge_documents(ws, legacy, WHERE)
    block = "Previous conversation: 4 messages\nMessage breakdown: {'user': 2, 'assistant': 2, 'tool': 0, 'system': 0}"
    assert merged["messages"][0] == {
        "role": "system", "content": "[Session Summary]\nlegacy summary\n---\n" + block + "\n---\nws summary",
        "timestamp": 207.0, "metadata": {"compaction": True, "compacted_count": 5 + 4 + 3}}
    assert contents(merged["messages"][1:]) == ["ws 3", "ws 4", "ws 5", "ws 6"]
    assert contents(merged["archived_messages"]) == [f"legacy {i}" for i in range(9)] + ["ws 0", "ws 1", "ws 2"]
    assert merged["session_id"] == "ws" and merged["metadata"] == {"model": "ws-model"}
    assert list(merged) == list(ws)


def test_merging_is_idempotent_so_a_rerun_can_tell_it_is_done():
    legacy, ws = compacted("legacy", 100.0, 5, 4), compacted("ws", 200.0, 3, 4)
    merged = merge_documents(ws, legacy, WHERE)
    assert merge_documents(merged, legacy, WHERE) == merged
    assert merge_documents(merged, ws, WHERE) == merged


def test_an_uncompacted_newer_side_follows_the_compacted_window():
    legacy = compacted("legacy", 100.0, 5, 4)
    ws = {"session_id": "ws", "messages": [msg("ws 0", 300.0), msg("ws 1", 301.0, "assistant")]}
    merged = merge_documents(ws, legacy, WHERE)
    assert merged["messages"][0] == legacy["messages"][0]  # unchanged: nothing new is archived
    assert contents(merged["messages"][1:]) == ["legacy 5", "legacy 6", "legacy 7", "legacy 8", "ws 0", "ws 1"]
    assert merged["archived_messages"] == legacy["archived_messages"]


def test_uncompacted_sides_unite_in_time_order_without_adding_keys():
    first = {"session_id": "a", "messages": [msg("a", 2.0), msg("dup", 3.0)]}
    second = {"session_id": "b", "messages": [msg("b", 1.0), msg("dup", 3.0)], "extra": 1}
    merged = merge_documents(first, second, WHERE)
    assert merged == {"session_id": "a", "messages": [msg("b", 1.0), msg("a", 2.0), msg("dup", 3.0)], "extra": 1}


def test_a_summary_an_old_merge_moved_to_the_end_goes_back_to_the_head():
    broken = compacted("ws", 200.0, 3, 4)
    broken["messages"] = broken["messages"][1:] + broken["messages"][:1]
    merged = merge_documents(broken, {"session_id": "x", "messages": []}, WHERE)
    assert merged["messages"][0]["metadata"]["compaction"] is True
    assert contents(merged["messages"][1:]) == ["ws 3", "ws 4", "ws 5", "ws 6"]


def test_equal_summary_texts_of_different_turns_are_both_kept():
    legacy, ws = compacted("legacy", 100.0, 1, 4), compacted("ws", 200.0, 1, 4)
    for doc in (legacy, ws):
        doc["messages"][0]["content"] = "[Session Summary]\nPrevious conversation: 1 messages"
    merged = merge_documents(ws, legacy, WHERE)
    assert merged["messages"][0]["content"].count("Previous conversation: 1 messages") == 2
    assert merged["messages"][0]["metadata"]["compacted_count"] == 1 + 4 + 1


def test_the_checkpoint_points_at_the_same_turn_when_nothing_unseen_precedes_it():
    ws = {"session_id": "ws", "messages": [msg("w0", 10.0), msg("w1", 11.0), msg("w2", 12.0)],
          "last_compaction": {"summary": "s", "message_index": 2, "timestamp": 11.5}}
    legacy = {"session_id": "l", "messages": [msg("l0", 20.0)]}
    merged = merge_documents(ws, legacy, WHERE)
    assert contents(merged["messages"]) == ["w0", "w1", "w2", "l0"]
    assert merged["last_compaction"] == {"summary": "s", "message_index": 2, "timestamp": 11.5}


def test_the_checkpoint_tail_starts_at_the_first_turn_it_never_saw():
    ws = {"session_id": "ws", "messages": [msg("w0", 10.0), msg("w1", 30.0)],
          "last_compaction": {"summary": "s", "message_index": 1}}
    legacy = {"session_id": "l", "messages": [msg("older", 5.0), msg("between", 20.0)]}
    merged = merge_documents(ws, legacy, WHERE)
    assert contents(merged["messages"]) == ["older", "w0", "between", "w1"]
    assert merged["last_compaction"]["message_index"] == 0


def test_the_newer_checkpoint_wins_and_a_second_sides_is_re_anchored_not_copied():
    ws = {"session_id": "ws", "messages": [msg("w0", 50.0)]}
    legacy = {"session_id": "l", "messages": [msg("l0", 10.0), msg("l1", 11.0)],
              "last_compaction": {"summary": "legacy", "message_index": 2, "timestamp": 10.5}}
    merged = merge_documents(ws, legacy, WHERE)
    assert merged["last_compaction"] == {"summary": "legacy", "message_index": 2, "timestamp": 10.5}
    older = {**ws, "last_compaction": {"summary": "ws", "message_index": 0, "timestamp": 1.0}}
    assert merge_documents(older, legacy, WHERE)["last_compaction"]["summary"] == "legacy"


def test_a_message_that_is_not_an_object_is_refused():
    with pytest.raises(CorruptFile, match=r"messages\[1\] is not an object"):
        merge_documents({"messages": [msg("a", 1.0), "junk"]}, {"messages": []}, WHERE)


def real_documents() -> list[dict]:
    files = sorted((PRAISONAI_FIXTURES / "home" / "sessions").glob("*.json"))
    files += sorted((FIXTURES / "praisonai-eras").glob("*/home/sessions/*.json"))
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    return [d for d in docs if all(isinstance(m, dict) for m in d.get("messages", []))]


def test_merging_real_files_again_changes_nothing_and_keeps_every_turn():
    def turns(doc):
        return {json.dumps([m.get("role"), m.get("content"), m.get("timestamp")])
                for m in doc.get("archived_messages", []) + doc.get("messages", [])
                if not m.get("metadata", {}).get("compaction")}

    docs = real_documents()
    assert len(docs) > 20
    for first, second in itertools.permutations(docs, 2):
        merged = merge_documents(first, second, WHERE)
        assert merge_documents(merged, second, WHERE) == merged
        assert turns(merged) == turns(first) | turns(second)
