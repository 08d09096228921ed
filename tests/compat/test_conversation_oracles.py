"""The real praisonai 4.7.19 conversation stores and praisonmem, both ways:

* sessions written by the real ``PostgresConversationStore`` (an Agent with ``db=`` on the streaming tool
  path, and the store API with JSONB state/metadata, tool calls and NULLs) and by its
  ``SQLiteConversationStore`` (the shipped fixture) are listed, shown and searched by praisonmem;
* sessions praisonmem migrated into each are returned whole, in order, by the real store's
  ``get_session`` / ``get_messages``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES, REPO
from tests.pgcluster import require_psycopg

GEN = REPO / "tests" / "fixtures" / "tools" / "gen_praisonai_fixtures.py"
RESERVED = "_praisonmem"

WRITE_PG = """
import importlib.util, json, os, sys
url, gen_path = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("gen17", gen_path)
gen = importlib.util.module_from_spec(spec); spec.loader.exec_module(gen)
from praisonaiagents import Agent, MemoryConfig, db
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
from praisonai.persistence.conversation.postgres import PostgresConversationStore
srv = gen.start_fake_openai()
os.environ.update(OPENAI_API_KEY="sk-fake", OPENAI_BASE_URL=f"http://127.0.0.1:{srv.server_port}/v1")
def weather(city: str) -> str:
    \"\"\"Get the weather for a city.\"\"\"
    return f"Sunny in {city}, 21C"
a = Agent(name="Stream Bot", instructions="Be brief.", llm="gpt-4o-mini", tools=[weather],
          memory=MemoryConfig(db=db(database_url=url), session_id="agent-tools-pg", user_id="bob"))
gen.drain(a.start("What is the weather in Paris?", stream=True))
srv.shutdown()
st = PostgresConversationStore(url=url)
st.create_session(ConversationSession(session_id="direct-pg", user_id="u1", agent_id="ag", name="Direct",
    state={"z": 1, "a": [1.5, 2e-06], "nested": {"b": None, "a": "é"}},
    metadata={"zz": True, "aa": 0.1, "title": "Direct tool chat"}, created_at=1796050073.07, updated_at=1796050080.5))
turns = [("user", "weather in Lisbon?", None, None),
         ("assistant", "", [{"id": "call_1", "type": "function",
                             "function": {"name": "weather", "arguments": "{\\"city\\": \\"Lisbon\\"}"}}], None),
         ("tool", "Sunny", None, "call_1"), ("assistant", "It is sunny ☀", None, None)]
for i, (role, content, tc, tcid) in enumerate(turns):
    st.add_message("direct-pg", ConversationMessage(id=f"m{i}", role=role, content=content, tool_calls=tc,
                   tool_call_id=tcid, metadata={"k": i}, created_at=1796050073.0 + i * 0.1))
st.create_session(ConversationSession(session_id="bare-pg"))
st.add_message("bare-pg", ConversationMessage(role="user", content="no metadata at all", created_at=1796040000.5))
out = {"list": [s.to_dict() for s in st.list_sessions(limit=100)]}
out["messages"] = {s["session_id"]: [m.to_dict() for m in st.get_messages(s["session_id"])] for s in out["list"]}
st.close()
print(json.dumps(out))
"""

READ_BACK = """
import json, sys
kind, where, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if kind == "pg":
    from praisonai.persistence.conversation.postgres import PostgresConversationStore
    st = PostgresConversationStore(url=where, auto_create_tables=False)
else:
    from praisonai.persistence.conversation.sqlite import SQLiteConversationStore
    st = SQLiteConversationStore(path=where)
out = {}
for sid in ids:
    s = st.get_session(sid)
    out[sid] = {"session": None if s is None else s.to_dict(),
                "messages": [m.to_dict() for m in st.get_messages(sid)]}
st.close()
print(json.dumps(out))
"""


def test_praisonmem_lists_shows_and_searches_what_postgres_conversation_store_wrote(oracle, cli, pg, tmp_path):
    require_psycopg()
    seen = oracle.json(WRITE_PG, pg.rw_url, GEN, cwd=tmp_path, timeout=300)
    listed = cli("session", "list", "--store", pg.ro_url, "--json")
    assert listed.exit_code == 0, listed.stderr
    rows = listed.json()
    assert [r["session_id"] for r in rows] == [s["session_id"] for s in seen["list"]]
    for row, theirs in zip(rows, seen["list"]):
        assert (row["agent_name"], row["user_id"], row["message_count"]) == (
            theirs["agent_id"], theirs["user_id"], len(seen["messages"][theirs["session_id"]]))
    assert next(r for r in rows if r["session_id"] == "direct-pg")["title"] == "Direct tool chat"
    for sid, messages in seen["messages"].items():
        shown = cli("session", "show", sid, "--store", pg.ro_url, "--json")
        assert shown.exit_code == 0, shown.stderr
        doc = shown.json()
        assert [(m["role"], m["content"], m.get("tool_calls"), m.get("tool_call_id"), m["timestamp"])
                for m in doc["messages"]] == [
            (m["role"], m["content"], m["tool_calls"] or None, m["tool_call_id"], m["created_at"]) for m in messages]
        # the row ids ride in the document's top-level _praisonmem (which the library's loader ignores), never in
        # a message's metadata
        assert [rid for rid, _ in doc[RESERVED]["rows"]] == [m["id"] for m in messages]
        assert not any(RESERVED in m["metadata"] for m in doc["messages"])
    assert [r["role"] for r in seen["messages"]["agent-tools-pg"]] == ["user", "assistant", "tool", "assistant"]
    hits = cli("session", "search", "Sunny", "--store", pg.ro_url, "--json").json()
    assert {h["session_id"] for h in hits} == {"agent-tools-pg", "direct-pg"}
    text = cli("session", "show", "agent-tools-pg", "--store", pg.ro_url)
    assert text.exit_code == 0 and "weather" in text.stdout


def _sources(tmp_path: Path) -> Path:
    sessions = tmp_path / "src"
    shutil.copytree(PRAISONAI_FIXTURES / "home" / "sessions", sessions,
                    ignore=shutil.ignore_patterns("*.lock", "*.tmp"))
    return sessions


def _expected(doc: dict) -> list[tuple]:
    msgs = [m for k in ("archived_messages", "messages") for m in doc.get(k, []) if isinstance(m, dict)]
    return [(m["role"], m["content"], m.get("tool_calls") or None, m.get("tool_call_id"),
             {k: v for k, v in (m.get("metadata") or {}).items()}) for m in msgs]


def _check_returned_whole(seen: dict, sessions: Path) -> None:
    for f in sorted(sessions.glob("*.json")):
        doc = json.loads(f.read_text())
        got = seen[doc["session_id"]]
        assert got["session"] is not None, doc["session_id"]
        s = got["session"]
        assert (s["user_id"], s["agent_id"], s["metadata"]) == (doc.get("user_id"), doc.get("agent_name"),
                                                                 doc.get("metadata")), doc["session_id"]
        rows = [(m["role"], m["content"], m["tool_calls"], m["tool_call_id"], m["metadata"] or {})
                for m in got["messages"]]
        assert rows == _expected(doc), doc["session_id"]  # archived first, then the active ones
        # nothing of praisonmem's through the library's API: its layout and envelopes are in its own side table
        assert RESERVED not in json.dumps(got), doc["session_id"]


def test_the_real_postgres_store_returns_what_praisonmem_migrated_whole(oracle, cli, pg, tmp_path):
    require_psycopg()
    sessions = _sources(tmp_path)
    moved = cli("session", "migrate", "--from", sessions, "--to", pg.rw_url, "--all", "--verify")
    assert moved.exit_code == 0, moved.stderr
    ids = [json.loads(f.read_text())["session_id"] for f in sessions.glob("*.json")]
    seen = oracle.json(READ_BACK, "pg", pg.rw_url, json.dumps(ids), cwd=tmp_path)
    _check_returned_whole(seen, sessions)


def test_the_real_sqlite_store_returns_what_praisonmem_migrated_whole(oracle, cli, tmp_path):
    sessions = _sources(tmp_path)
    db = tmp_path / "praisonai_conversations.db"
    moved = cli("session", "migrate", "--from", sessions, "--to", db, "--all", "--verify")
    assert moved.exit_code == 0, moved.stderr
    ids = [json.loads(f.read_text())["session_id"] for f in sessions.glob("*.json")]
    before = db.read_bytes()
    seen = oracle.json(READ_BACK, "sqlite", db, json.dumps(ids), cwd=tmp_path)
    _check_returned_whole(seen, sessions)
    # the library's opener found its own schema: it changed nothing (no DDL, no rewrite)
    assert db.read_bytes() == before


def test_a_session_the_real_store_changed_after_migration_comes_back_with_the_change(oracle, cli, pg, tmp_path):
    require_psycopg()
    sessions = _sources(tmp_path)
    assert cli("session", "migrate", "--from", sessions, "--to", pg.rw_url, "my_chat").exit_code == 0
    oracle.run("""
import sys
from praisonai.persistence.conversation.base import ConversationMessage
from praisonai.persistence.conversation.postgres import PostgresConversationStore
st = PostgresConversationStore(url=sys.argv[1], auto_create_tables=False)
st.add_message("my_chat", ConversationMessage(id="msg-later", role="user", content="a later turn", created_at=1.9e9))
s = st.get_session("my_chat"); s.metadata = {**(s.metadata or {}), "ended_at": 1.5}; st.update_session(s)
st.close()
""", pg.rw_url, cwd=tmp_path)
    doc = cli("session", "show", "my_chat", "--store", pg.ro_url, "--json").json()
    assert doc["messages"][-1]["content"] == "a later turn" and doc["metadata"]["ended_at"] == 1.5
    original = json.loads((sessions / "my_chat.json").read_text())
    assert doc["messages"][:-1] == original["messages"]
    # and a rerun of the migrate does not overwrite the newer target
    again = cli("session", "migrate", "--from", sessions, "--to", pg.rw_url, "my_chat", "--json")
    assert (again.exit_code, again.json()["records"][0]["action"]) == (0, "skipped")
