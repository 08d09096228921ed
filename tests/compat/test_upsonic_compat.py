"""The real Upsonic 0.77.3 reads what praisonmem writes; praisonaiagents loads converted sessions."""

from __future__ import annotations

import json

import pytest

from tests.compat.conftest import last_json, run_library

pytest.importorskip("upsonic")

UPSONIC_ENV = {"UPSONIC_TELEMETRY": "false"}


def test_library_get_user_memory_sees_praisonmem_set(cli, db, tmp_path):
    assert cli("upsonic", "user-memory", "set", "user_123", "detected_tone=formal", "key_entities={\"bank\": \"N26\"}",
               "--db", db).exit_code == 0
    traits = last_json(run_library("""
        import json, sys
        from upsonic.storage.sqlite import SqliteStorage
        memory = SqliteStorage(db_file=sys.argv[1]).get_user_memory(user_id="user_123", agent_id="agent_fin")
        print(json.dumps(memory.user_memory))
    """, str(db), home=tmp_path, **UPSONIC_ENV))
    assert traits["detected_tone"] == "formal" and traits["key_entities"] == {"bank": "N26"}
    assert traits["current_goal"] == "track savings"


def test_library_reads_a_session_converted_from_praisonai(cli, db, tmp_path, fixture_home):
    assert cli("--home", fixture_home, "upsonic", "convert", "history_ec9d38c8", "compacted-demo",
               "--from-praisonai", "--db", db).exit_code == 0
    seen = last_json(run_library("""
        import json, sys
        from upsonic.storage.sqlite import SqliteStorage
        from upsonic.messages.messages import ModelMessagesTypeAdapter
        storage = SqliteStorage(db_file=sys.argv[1])
        raw = storage.get_session(session_id="history_ec9d38c8", deserialize=False)
        messages = ModelMessagesTypeAdapter.validate_python(raw["messages"])
        typed = storage.get_session(session_id="compacted-demo")
        print(json.dumps({"user_id": raw["user_id"], "kinds": [m.kind for m in messages],
                          "parts": [type(p).__name__ for m in messages for p in m.parts],
                          "typed_messages": len(typed.messages), "summary": typed.summary}))
    """, str(db), home=tmp_path, **UPSONIC_ENV))
    assert seen["user_id"] == "bob"
    assert seen["kinds"] == ["request", "response", "request", "response"]
    assert seen["parts"] == ["UserPromptPart", "ToolCallPart", "ToolReturnPart", "TextPart"]
    assert seen["typed_messages"] == 10 and seen["summary"].startswith("User is planning a May trip")


def test_praisonaiagents_loads_a_session_converted_to_praisonai(cli, db, tmp_path):
    home = tmp_path / "home"
    assert cli("upsonic", "convert", "session_001", "--to-praisonai", "--db", db, "--home", home).exit_code == 0
    history = last_json(run_library("""
        import json
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonaiagents.paths import get_sessions_dir
        print(json.dumps(DefaultSessionStore(session_dir=str(get_sessions_dir())).get_chat_history("session_001")))
    """, home=home))
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert history[4]["tool_calls"][0]["function"]["name"] == "fx_convert"
    assert history[5] == {"role": "tool", "content": "230.12", "tool_call_id": "call_0002"}


def test_library_reads_an_imported_database(cli, db, tmp_path):
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", db, "-o", export).exit_code == 0
    assert cli("upsonic", "import", export, "--db", tmp_path / "new.db").exit_code == 0
    seen = last_json(run_library("""
        import json, sys
        from upsonic.storage.sqlite import SqliteStorage
        storage = SqliteStorage(db_file=sys.argv[1])
        rows, total = storage.get_sessions(deserialize=False)
        users, count = storage.get_user_memories(deserialize=False)
        session = storage.get_session(session_id="session_003")
        print(json.dumps({"total": total, "users": count, "messages": len(session.messages),
                          "metadata": session.metadata}))
    """, str(tmp_path / "new.db"), home=tmp_path, **UPSONIC_ENV))
    assert seen == {"total": 4, "users": 2, "messages": 2, "metadata": {"channel": "slack", "tags": ["de", "support"]}}
    assert json.loads(export.read_text())["format"] == "praisonmem-upsonic"
